/**
 * The built daemon runs its background threads (V8's helpers, libuv's pool,
 * native libraries' threads, the YAML worker) below its serving thread, so
 * that on busy cores a request is served first
 * (runtimes/node/daemon/background-threads.ts). Linux only: elsewhere a priority is
 * the whole process's.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import { BACKGROUND_NICE } from '../../runtimes/node/daemon/background-threads.js'
import { Daemon, eventually } from './daemon.js'

/** SCHED_OTHER and SCHED_IDLE, as a thread's stat line numbers its policy. */
const SCHED_OTHER = 0
const SCHED_IDLE = 5
/** Set by the daemon where util-linux's chrt is installed (Debian's essential packages include it). */
const CHRT = existsSync('/usr/bin/chrt') || existsSync('/bin/chrt')

/**
 * Each thread's nice value and scheduling policy (fields 19 and 41 of its
 * stat line, counted after the command's closing parenthesis); a thread
 * that ended meanwhile is left out.
 */
async function threadPriorities(pid: number): Promise<Map<number, { nice: number; policy: number }>> {
  const threads = new Map<number, { nice: number; policy: number }>()
  for (const entry of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${entry}/stat`, 'utf8').catch(() => undefined)
    if (!stat) continue
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
    threads.set(Number(entry), { nice: Number(fields[16]), policy: Number(fields[38]) })
  }
  return threads
}

describe('the daemon\'s background threads', { skip: process.platform !== 'linux' }, () => {
  let daemon: Daemon
  before(async () => {
    daemon = await Daemon.start()
  })
  after(async () => {
    await daemon.stop()
  })

  it('run at the lowest priority, and the serving thread at the priority it was started with', async () => {
    const pid = daemon.process.pid!
    // A YAML body of 16 KiB and more, its values quoted (not read line by line), starts the worker, which lowers itself.
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\ndata:\n${Array.from({ length: 1200 }, (_, i) => `  k${i}: "value ${i}"`).join('\n')}\n`
    assert.ok(yaml.length > 16 * 1024)
    const threadsBefore = (await readdir(`/proc/${pid}/task`)).length
    const created = await daemon.postYaml('/api/v1/namespaces/default/configmaps', yaml)
    assert.equal(created.status, 201, created.text)
    assert.ok((await readdir(`/proc/${pid}/task`)).length > threadsBefore, 'the YAML worker started')

    // chrt runs a while after the nice value is set (IDLE_POLICY_DELAY_MS after listening): its policy may take a moment.
    await eventually(async () => {
      const threads = await threadPriorities(pid)
      assert.deepEqual(threads.get(pid), { nice: 0, policy: SCHED_OTHER }, 'the serving thread keeps its priority')
      const background = [...threads].filter(([thread]) => thread !== pid)
      assert.ok(background.length >= 5, `V8's and libuv's threads, the worker: ${background.length} threads`)
      const expected = { nice: BACKGROUND_NICE, policy: CHRT ? SCHED_IDLE : SCHED_OTHER }
      assert.deepEqual(
        background.filter(([, priority]) => priority.nice !== expected.nice || priority.policy !== expected.policy),
        [],
        `every other thread runs at nice ${expected.nice}${CHRT ? ', under SCHED_IDLE' : ''}`,
      )
    })
    assert.equal((await daemon.kubectl('get', 'configmap', 'many', '-o', 'jsonpath={.data.k1199}')).stdout, 'value 1199')
  })
})
