/**
 * The built daemon runs its background threads (V8's helpers, libuv's pool,
 * native libraries' threads) below its serving thread, so that on busy cores
 * a request is served first (runtimes/node/background-threads.ts). Linux only:
 * elsewhere a priority is the whole process's.
 */
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import { BACKGROUND_NICE } from '../../runtimes/node/background-threads.js'
import { Daemon } from './daemon.js'

/** Each thread's nice value (field 19 of its stat line, counted after the command's closing parenthesis); a thread that ended meanwhile is left out. */
async function threadNices(pid: number): Promise<Map<number, number>> {
  const nices = new Map<number, number>()
  for (const entry of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${entry}/stat`, 'utf8').catch(() => undefined)
    if (stat) nices.set(Number(entry), Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]))
  }
  return nices
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

    const nices = await threadNices(pid)
    assert.equal(nices.get(pid), 0, 'the serving thread keeps its priority')
    const background = [...nices].filter(([thread]) => thread !== pid)
    assert.ok(background.length >= 5, `V8's and libuv's threads, the worker: ${background.length} threads`)
    assert.deepEqual(
      background.filter(([, nice]) => nice !== BACKGROUND_NICE),
      [],
      'every other thread runs at the background priority',
    )
    assert.equal((await daemon.kubectl('get', 'configmap', 'many', '-o', 'jsonpath={.data.k1199}')).stdout, 'value 1199')
  })
})
