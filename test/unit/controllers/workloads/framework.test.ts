import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { selectControllers } from '../../../../core/controllers/workloads/catalogue.js'
import type { WorkloadController } from '../../../../core/controllers/workloads/context.js'
import { WorkQueue } from '../../../../core/controllers/workloads/work-queue.js'
import { silentLogger } from '../../../../core/logging/logger.js'

const controller = (name: string, onByDefault = true): WorkloadController => ({ name, serviceAccount: `${name}-controller`, onByDefault, start: () => () => {} })
const KNOWN = [controller('job'), controller('cronjob'), controller('hpa', false)]
const names = (selection: string[]) => selectControllers(selection, KNOWN).map((c) => c.name)

describe('selectControllers', () => {
  it('reads --controllers as kube-controller-manager does', () => {
    assert.deepEqual(names([]), [])
    assert.deepEqual(names(['*']), ['job', 'cronjob'])
    assert.deepEqual(names(['*', 'hpa']), ['job', 'cronjob', 'hpa'])
    assert.deepEqual(names(['-job', '*']), ['cronjob'])
    assert.deepEqual(names(['cronjob']), ['cronjob'])
  })

  it('refuses a name it does not know, naming it', () => {
    assert.throws(() => names(['*', 'nodelifecycle', '-ipam']), {
      message: '--controllers: "nodelifecycle" is not in the list of known controllers, "ipam" is not in the list of known controllers (known: job, cronjob, hpa)',
    })
  })
})

describe('WorkQueue', () => {
  it('reconciles a key added while it waits once, and a key added while it runs once more after', async () => {
    const calls: string[] = []
    let release: () => void = () => {}
    const queue = new WorkQueue(
      async (key) => {
        calls.push(key)
        if (calls.length === 1) await new Promise<void>((r) => (release = r))
      },
      { logger: silentLogger, name: 'test', concurrency: 1 },
    )
    queue.add('a')
    queue.add('a') // running: once more after
    queue.add('b')
    queue.add('b') // waiting: merged
    release()
    await queue.idle()
    assert.deepEqual(calls, ['a', 'b', 'a'])
  })

  it('retries a failed reconcile until it succeeds', async () => {
    let attempts = 0
    const queue = new WorkQueue(
      async () => {
        if (++attempts < 3) throw new Error('not yet')
      },
      { logger: silentLogger, name: 'test' },
    )
    queue.add('a')
    const keepAlive = setInterval(() => {}, 5)
    while (attempts < 3) await new Promise((r) => setTimeout(r, 5))
    await queue.idle()
    clearInterval(keepAlive)
    assert.equal(attempts, 3)
    queue.stop()
  })
})
