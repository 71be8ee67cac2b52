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

  it("takes kube-controller-manager's canonical names beside their aliases", () => {
    assert.deepEqual(names(['job-controller', 'cronjob']), ['job', 'cronjob'])
    assert.deepEqual(names(['*', '-cronjob-controller']), ['job'])
    assert.deepEqual(
      selectControllers(['root-ca-certificate-publisher-controller', 'endpointslice-mirroring-controller']).map((c) => c.name),
      ['endpointslicemirroring', 'root-ca-cert-publisher'],
    )
    assert.throws(() => names(['replicaset-controller']), { message: /"replicaset-controller" is not in the list of known controllers/ })
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
    const gate = new Promise<void>((r) => (release = r))
    let started: () => void = () => {}
    const running = new Promise<void>((r) => (started = r))
    const queue = new WorkQueue(
      async (key) => {
        calls.push(key)
        if (calls.length === 1) {
          started()
          await gate
        }
      },
      { logger: silentLogger, name: 'test', concurrency: 1 },
    )
    queue.add('a')
    queue.add('a') // waiting: merged
    queue.add('b')
    await running
    queue.add('a') // running: once more after
    queue.add('b') // waiting: merged
    release()
    await queue.idle()
    assert.deepEqual(calls, ['a', 'b', 'a'])
  })

  it('lets timers and I/O run between reconciles, however often a key comes back', async () => {
    // Re-added from its own reconcile, many times: two controllers undoing each other's writes on the memory store.
    const rounds = 20_000
    let runs = 0
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        if (++runs < rounds) queue.add(key)
      },
      { logger: silentLogger, name: 'test' },
    )
    let runsWhenTheTimerFired = -1
    setTimeout(() => (runsWhenTheTimerFired = runs), 1)
    queue.add('a')
    await queue.idle()
    await new Promise((r) => setTimeout(r, 5))
    // Chained promise to promise, every round would have run before the timer could.
    assert.ok(runsWhenTheTimerFired >= 0 && runsWhenTheTimerFired < rounds, `the timer fired after ${runsWhenTheTimerFired} of ${rounds} rounds`)
  })

  it('waits a delay longer than a timer holds (24.8 days) instead of firing at once', async () => {
    const reconciled: string[] = []
    const warnings: string[] = []
    const onWarning = (w: Error): void => void warnings.push(w.name)
    process.on('warning', onWarning)
    const queue = new WorkQueue(async (key) => void reconciled.push(key), { logger: silentLogger, name: 'test' })
    try {
      // A yearly CronJob's next run, a minReadySeconds of 30 days: past 2^31-1 ms, a timer given the whole delay fires after 1 ms.
      queue.addAfter('yearly', 365 * 24 * 3600 * 1000)
      queue.addAfter('soon', 5)
      await new Promise((resolve) => setTimeout(resolve, 100))
      await queue.idle()
      assert.deepEqual(reconciled, ['soon'])
      assert.deepEqual(warnings, [], 'the runtime warned of a timeout overflow')
    } finally {
      queue.stop()
      process.off('warning', onWarning)
    }
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
