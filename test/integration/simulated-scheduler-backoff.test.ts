/**
 * The simulated scheduler's pod backoff: pods that fit nowhere are tried
 * again when room may have come free, but each no sooner than its backoff
 * allows, as upstream's scheduling queue does. Before, every pod that went
 * tried every pending pod again: with thousands pending that was a core.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Logger } from '../../core/logging/logger.js'
import { silentLogger } from '../../core/logging/logger.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { ADMIN_IDENTITY } from '../../core/machinery/identities.js'
import { nodes } from '../../core/resources/core/nodes.js'
import { pods } from '../../core/resources/core/pods.js'
import { createApiServer } from '../../core/server.js'
import { backoffAfter } from '../../core/simulation/scheduler.js'

const PENDING = 30
const GONE = 40

/** Counts the scheduler's failed tries, from its debug lines. */
function countingLogger(): Logger & { failedTries: () => number } {
  let tries = 0
  return {
    ...silentLogger,
    debug(_fields, message) {
      if (message === 'the simulated scheduler found no node for the pod') tries++
    },
    failedTries: () => tries,
  }
}

async function until(what: string, holds: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await holds()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail(`gave up waiting: ${what}`)
}

const pod = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'busybox' }], ...spec },
})

describe('simulated scheduler backoff', () => {
  it('doubles from 1 s to 10 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 9].map(backoffAfter), [1000, 2000, 4000, 8000, 10_000, 10_000])
  })

  it('tries a pod that fit nowhere again after its backoff, not on every pod that goes, and binds it once room is made', async () => {
    const logger = countingLogger()
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, nodes: { count: 1, capacity: { cpu: '1', memory: '4Gi', pods: '110' } } }, { logger })
    try {
      await server.ready
      const client = server.client
      for (let i = 0; i < PENDING; i++) await client.create(pods, 'default', pod(`big-${i}`, { containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '8' } } }] }))
      const unschedulable = async () => {
        const list = await client.list(pods, 'default')
        return list.items.filter((p) => JSON.stringify(p['status']).includes('"reason":"Unschedulable"')).length
      }
      await until('every big pod marked Unschedulable', async () => (await unschedulable()) === PENDING)

      // Pods bound elsewhere come and go: each going may free room, so each is a reason to try again.
      const before = logger.failedTries()
      for (let i = 0; i < GONE; i++) await client.create(pods, 'default', pod(`passing-${i}`, { nodeName: 'elsewhere' }))
      for (let i = 0; i < GONE; i++) {
        await client.delete(pods, 'default', `passing-${i}`, { gracePeriodSeconds: 0 })
        // Time for the scheduler to act on each departure, as it would between a real cluster's.
        await new Promise((r) => setTimeout(r, 20))
      }
      const during = logger.failedTries() - before
      // Each big pod waits out its backoff (1 s, then 2 s, 4 s...) between tries; before, 40 departures meant up to 1,200 tries.
      assert.ok(during <= PENDING * 4, `${during} tries while ${GONE} pods went`)

      // Room is made: every big pod is bound, each once its backoff has passed.
      const node = (await client.list(nodes, '')).items[0]!
      const status = node['status'] as { allocatable: Record<string, string>; capacity: Record<string, string> }
      await client.updateStatus(nodes, '', { ...node, status: { ...status, allocatable: { ...status.allocatable, cpu: '1000' }, capacity: { ...status.capacity, cpu: '1000' } } })
      await until('every big pod bound', async () => (await client.list(pods, 'default')).items.filter((p) => (p['spec'] as { nodeName?: string }).nodeName === node.metadata.name).length === PENDING)
    } finally {
      await server.shutdown()
    }
  })
})
