/**
 * The built daemon runs its background threads (V8's helpers, libuv's pool,
 * native libraries' threads, the YAML worker) below its serving thread, so
 * that on busy cores a request is served first: the YAML worker, which
 * decodes what clients send, lowest, and the threads whose work the serving
 * thread waits on with a share of a busy core
 * (runtimes/node/daemon/background-threads.ts). Linux only: elsewhere a priority is
 * the whole process's.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import { YAML_WORKER_NICE, HELPER_NICE } from '../../runtimes/node/daemon/background-threads.js'
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

  it('run below the serving thread: V8\u2019s and libuv\u2019s at nice 10, the YAML worker at nice 19 under SCHED_IDLE', async () => {
    const pid = daemon.process.pid!
    // A YAML body of 16 KiB and more, its values quoted (not read line by line), starts the worker, which lowers itself.
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\ndata:\n${Array.from({ length: 1200 }, (_, i) => `  k${i}: "value ${i}"`).join('\n')}\n`
    assert.ok(yaml.length > 16 * 1024)
    const threadsBefore = new Set((await readdir(`/proc/${pid}/task`)).map(Number))
    const created = await daemon.postYaml('/api/v1/namespaces/default/configmaps', yaml)
    assert.equal(created.status, 201, created.text)
    assert.ok((await readdir(`/proc/${pid}/task`)).length > threadsBefore.size, 'the YAML worker started')

    // The worker runs chrt a moment after it starts: its policy may take a moment.
    await eventually(async () => {
      const threads = await threadPriorities(pid)
      assert.deepEqual(threads.get(pid), { nice: 0, policy: SCHED_OTHER }, 'the serving thread keeps its priority')
      const helpers = [...threads].filter(([thread]) => thread !== pid && threadsBefore.has(thread))
      assert.ok(helpers.length >= 4, `V8's and libuv's threads: ${helpers.length} threads`)
      assert.deepEqual(
        helpers.filter(([, priority]) => priority.nice !== HELPER_NICE || priority.policy !== SCHED_OTHER),
        [],
        `V8\u2019s and libuv\u2019s threads run at nice ${HELPER_NICE}, under the normal policy`,
      )
      const started = [...threads].filter(([thread]) => !threadsBefore.has(thread))
      const worker = { nice: YAML_WORKER_NICE, policy: CHRT ? SCHED_IDLE : SCHED_OTHER }
      assert.ok(
        started.some(([, priority]) => priority.nice === worker.nice && priority.policy === worker.policy),
        `the YAML worker runs at nice ${worker.nice}${CHRT ? ', under SCHED_IDLE' : ''}`,
      )
    })
    assert.equal((await daemon.kubectl('get', 'configmap', 'many', '-o', 'jsonpath={.data.k1199}')).stdout, 'value 1199')
  })
})
