/**
 * `apiserver_storage_objects` as a scraper reads it: the count of each
 * stored resource under `<resource>[.<group>]`, and -1 for a resource whose
 * count failed (upstream's value for a fetching error), never the last
 * figure left standing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Metrics } from '../../../core/metrics/metrics.js'
import { countStorageObjects, startStorageObjectCounter } from '../../../core/metrics/storage-objects.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { Registry } from '../../../core/registry/registry.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** The part of a registry the count reads: its entries, and each one's storage prefix and count. */
function registryCounting(counts: Record<string, () => Promise<number>>): Registry {
  const entries = [
    { group: '', resource: 'configmaps' },
    { group: 'apps', resource: 'deployments' },
  ]
  return {
    catalogue: { entries },
    store: (entry: { resource: string }) => ({
      prefix: () => `/registry/${entry.resource}/`,
      storage: { count: counts[entry.resource] },
    }),
  } as unknown as Registry
}

describe('apiserver_storage_objects', () => {
  it('publishes each count, and -1 once a count fails', async () => {
    const metrics = new Metrics()
    let failing = false
    const registry = registryCounting({
      configmaps: async () => 3,
      deployments: async () => {
        if (failing) throw new Error('etcdserver: request timed out')
        return 2
      },
    })
    await countStorageObjects(registry, metrics, quiet)
    assert.match(metrics.render(), /^apiserver_storage_objects\{resource="deployments\.apps"\} 2$/m)
    failing = true
    await countStorageObjects(registry, metrics, quiet)
    const text = metrics.render()
    assert.match(text, /^# HELP apiserver_storage_objects \[STABLE\] /m)
    assert.match(text, /^apiserver_storage_objects\{resource="configmaps"\} 3$/m)
    assert.match(text, /^apiserver_storage_objects\{resource="deployments\.apps"\} -1$/m)
  })

  it('counts first after start-up is over and its first delay, not while it writes', async () => {
    const counting = (firstDelayMs: number) => {
      const metrics = new Metrics()
      const calls = { counted: 0 }
      const registry = registryCounting({
        configmaps: async () => ++calls.counted,
        deployments: async () => 0,
      })
      let started!: () => void
      const stop = startStorageObjectCounter(registry, metrics, 60_000, quiet, new Promise<void>((resolve) => (started = resolve)), firstDelayMs)
      return { metrics, calls, started: () => started(), stop }
    }
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 2))
    }

    // Start-up not over: nothing counted. Over, with a delay of a minute: still nothing.
    const waiting = counting(60_000)
    try {
      await turns(10)
      assert.equal(waiting.calls.counted, 0)
      waiting.started()
      await turns(10)
      assert.equal(waiting.calls.counted, 0)
      assert.doesNotMatch(waiting.metrics.render(), /apiserver_storage_objects/)
    } finally {
      waiting.stop()
    }

    // Over, with a short delay: counted.
    const soon = counting(5)
    try {
      soon.started()
      for (let i = 0; i < 500 && soon.calls.counted === 0; i++) await turns(1)
      assert.match(soon.metrics.render(), /^apiserver_storage_objects\{resource="configmaps"\} 1$/m)
    } finally {
      soon.stop()
    }
  })
})
