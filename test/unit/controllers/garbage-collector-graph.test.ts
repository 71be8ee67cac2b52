/** The garbage collector's owner graph and its work queue, without a server. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type GraphEffects, type ObjectRef, OwnerGraph } from '../../../core/controllers/garbage-collector-graph.js'
import { WorkQueue } from '../../../core/controllers/garbage-collector-queue.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject, OwnerReference } from '../../../core/machinery/object.js'

const entry = { resource: 'things', namespaced: true } as ResourceEntry
const ref = (uid: string): ObjectRef => ({ entry, namespace: 'default', name: uid, uid })
const owner = (uid: string, blockOwnerDeletion?: boolean): OwnerReference => ({
  apiVersion: 'v1',
  kind: 'Thing',
  name: uid,
  uid,
  ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
})

function object(uid: string, meta: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { metadata: { name: uid, namespace: 'default', uid, ...meta } }
}

const uids = (effects: GraphEffects) => ({
  attemptToDelete: effects.attemptToDelete.map((r) => r.uid).sort(),
  attemptToOrphan: effects.attemptToOrphan.map((r) => r.uid).sort(),
})

describe('owner graph', () => {
  it('asks to check a new dependent whose owner it has not seen, not one whose owner lives', () => {
    const graph = new OwnerGraph()
    assert.deepEqual(uids(graph.observe(ref('dep'), object('dep', { ownerReferences: [owner('ghost')] }))), {
      attemptToDelete: ['dep'],
      attemptToOrphan: [],
    })
    graph.observe(ref('rs'), object('rs'))
    assert.deepEqual(uids(graph.observe(ref('pod'), object('pod', { ownerReferences: [owner('rs')] }))), {
      attemptToDelete: [],
      attemptToOrphan: [],
    })
    assert.deepEqual(graph.dependents('rs').map((r) => r.uid), ['pod'])
  })

  it('hands the dependents of a deleted owner over to be checked', () => {
    const graph = new OwnerGraph()
    graph.observe(ref('rs'), object('rs'))
    graph.observe(ref('a'), object('a', { ownerReferences: [owner('rs')] }))
    graph.observe(ref('b'), object('b', { ownerReferences: [owner('rs')] }))
    assert.deepEqual(uids(graph.forget('rs')), { attemptToDelete: ['a', 'b'], attemptToOrphan: [] })
    assert.equal(graph.has('rs'), false)
  })

  it('asks to orphan an owner once, when it gets the orphan finalizer with a deletionTimestamp', () => {
    const graph = new OwnerGraph()
    graph.observe(ref('rs'), object('rs'))
    const marked = object('rs', { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['orphan'] })
    assert.deepEqual(uids(graph.observe(ref('rs'), marked)), { attemptToDelete: [], attemptToOrphan: ['rs'] })
    assert.deepEqual(uids(graph.observe(ref('rs'), marked)), { attemptToDelete: [], attemptToOrphan: [] })
  })

  it('starts a foreground deletion with the dependents and the owner itself', () => {
    const graph = new OwnerGraph()
    graph.observe(ref('rs'), object('rs'))
    graph.observe(ref('pod'), object('pod', { ownerReferences: [owner('rs', true)] }))
    const marked = object('rs', { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] })
    assert.deepEqual(uids(graph.observe(ref('rs'), marked)), { attemptToDelete: ['pod', 'rs'], attemptToOrphan: [] })
    assert.equal(graph.isDeletingDependents('rs'), true)
    assert.deepEqual(graph.blockingDependents('rs').map((r) => r.uid), ['pod'])
  })

  it('tells a waiting owner when a dependent stops blocking it or goes', () => {
    const graph = new OwnerGraph()
    graph.observe(ref('rs'), object('rs', { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }))
    graph.observe(ref('a'), object('a', { ownerReferences: [owner('rs', true)] }))
    graph.observe(ref('b'), object('b', { ownerReferences: [owner('rs', true)] }))
    assert.deepEqual(uids(graph.observe(ref('a'), object('a', { ownerReferences: [owner('rs', false)] }))), {
      attemptToDelete: ['rs'],
      attemptToOrphan: [],
    })
    assert.deepEqual(graph.blockingDependents('rs').map((r) => r.uid), ['b'])
    assert.deepEqual(uids(graph.forget('b')), { attemptToDelete: ['rs'], attemptToOrphan: [] })
    assert.deepEqual(graph.blockingDependents('rs'), [])
  })

  it('forgets the link when a dependent drops its owner reference', () => {
    const graph = new OwnerGraph()
    graph.observe(ref('rs'), object('rs'))
    graph.observe(ref('pod'), object('pod', { ownerReferences: [owner('rs')] }))
    graph.observe(ref('pod'), object('pod'))
    assert.deepEqual(graph.dependents('rs'), [])
  })
})

describe('garbage collector work queue', () => {
  it('runs nothing before start, one run per key at a time, and again when added while running', async () => {
    const runs: string[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const queue = new WorkQueue<string>(
      async (item) => {
        runs.push(item)
        if (item === 'first') await gate
        return 'done'
      },
      { workers: 4 },
    )
    queue.add('k', 'first')
    await Promise.resolve()
    assert.deepEqual(runs, [])
    queue.start()
    queue.add('k', 'second')
    queue.add('k', 'third')
    assert.deepEqual(runs, ['first'])
    release()
    await queue.whenIdle()
    assert.deepEqual(runs, ['first', 'third'])
  })

  it('retries a failing item with backoff until it succeeds', async () => {
    let attempts = 0
    const errors: string[] = []
    const queue = new WorkQueue<string>(
      async () => {
        attempts += 1
        if (attempts < 3) throw new Error(`attempt ${attempts}`)
        return 'done'
      },
      { workers: 1, baseDelayMs: 1, onError: (_key, err) => errors.push(String(err)) },
    )
    queue.start()
    queue.add('k', 'x')
    // Retry timers do not hold the process open on their own; this test does.
    const keepAlive = setInterval(() => {}, 1000)
    await queue.whenIdle()
    clearInterval(keepAlive)
    assert.equal(attempts, 3)
    assert.deepEqual(errors, ['Error: attempt 1', 'Error: attempt 2'])
  })

  it('drops pending retries on stop', async () => {
    let attempts = 0
    const queue = new WorkQueue<string>(
      async () => {
        attempts += 1
        return 'retry'
      },
      { workers: 1, baseDelayMs: 5 },
    )
    queue.start()
    queue.add('k', 'x')
    await new Promise((resolve) => setTimeout(resolve, 1))
    queue.stop()
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(attempts, 1)
    assert.equal(queue.idle, true)
  })
})
