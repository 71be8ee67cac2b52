import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { updateManagedFields, type ManagedFieldsEntry } from '../../../core/apply/index.js'

const POD = 'io.k8s.api.core.v1.Pod'
const T1 = new Date('2024-05-01T10:00:00.250Z')
const T2 = new Date('2024-05-01T11:00:00Z')
const opts = (now: Date, subresource?: string) => ({ now, apiVersion: 'v1', typeName: POD, subresource })

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', uid: 'u1', labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
  status: { phase: 'Pending' },
}

const withFields = <T extends { metadata: object }>(obj: T, managedFields: ManagedFieldsEntry[]) => ({
  ...obj,
  metadata: { ...obj.metadata, managedFields },
})

describe('managedFields of ordinary writes', () => {
  it('gives a created object to its creator, without type meta, server-set metadata or status', () => {
    const mf = updateManagedFields(undefined, pod, 'kubectl-create', opts(T1))
    assert.deepEqual(mf, [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {}, '.': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {}, 'f:name': {}, '.': {} } } },
        },
      },
    ])
  })

  it('moves changed fields to the writer and leaves the rest with their owner', () => {
    const created = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    const next = structuredClone(created)
    next.metadata.labels.app = 'b'
    ;(next.metadata as Record<string, unknown>)['annotations'] = { note: 'x' }
    const mf = updateManagedFields(created, next, 'editor', opts(T2))
    assert.deepEqual(
      mf.map((e) => [e.manager, e.time, e.fieldsV1]),
      [
        // the creator keeps the labels map itself; the editor took the changed key
        [
          'creator',
          '2024-05-01T10:00:00Z',
          { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {}, 'f:name': {}, '.': {} } } } },
        ],
        ['editor', '2024-05-01T11:00:00Z', { 'f:metadata': { 'f:annotations': { 'f:note': {}, '.': {} }, 'f:labels': { 'f:app': {} } } }],
      ],
    )
  })

  it('drops fields removed from the object from every owner, and an owner left with nothing', () => {
    const created = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    const next = structuredClone(created)
    ;(next.metadata as { labels?: unknown }).labels = undefined
    next.spec.containers[0]!.image = 'nginx:2'
    const mf = updateManagedFields(created, JSON.parse(JSON.stringify(next)), 'creator', opts(T2))
    assert.deepEqual(mf.map((e) => [e.manager, e.fieldsV1]), [
      ['creator', { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {}, 'f:name': {}, '.': {} } } } }],
    ])
    assert.equal(mf[0]!.time, '2024-05-01T11:00:00Z')
  })

  it('keeps the entry and its time when the write changes nothing', () => {
    const created = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    const mf = updateManagedFields(created, structuredClone(created), 'other', opts(T2))
    assert.deepEqual(mf, created.metadata.managedFields)
  })

  it('records a status write under the subresource, ignoring spec changes and managedFields sent by the client', () => {
    const created = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    const next = withFields({ ...created, status: { phase: 'Running' } }, [])
    const mf = updateManagedFields(created, next, 'kubelet', opts(T2, 'status'))
    assert.deepEqual(mf.map((e) => [e.manager, e.subresource, e.fieldsV1]), [
      ['creator', undefined, created.metadata.managedFields[0]!.fieldsV1],
      ['kubelet', 'status', { 'f:status': { 'f:phase': {} } }],
    ])
  })

  it('lets a client clear managedFields with [], and keeps the live ones when it sends unreadable entries', () => {
    const created = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    assert.deepEqual(updateManagedFields(created, withFields(pod, []), 'x', opts(T2)), [])
    const garbage = withFields(pod, [{ manager: 'x', operation: 'Delete' } as unknown as ManagedFieldsEntry])
    assert.deepEqual(updateManagedFields(created, garbage, 'x', opts(T2)), created.metadata.managedFields)
    const { managedFields: _none, ...bareMeta } = created.metadata
    assert.deepEqual(updateManagedFields({ ...created, metadata: bareMeta }, { ...pod, metadata: { ...bareMeta, labels: { app: 'z' } } }, 'x', opts(T2)), [])
  })

  it('keeps at most ten update entries, merging the oldest into ancient-changes', () => {
    let live: Record<string, unknown> = withFields(pod, updateManagedFields(undefined, pod, 'creator', opts(T1)))
    for (let i = 0; i < 11; i++) {
      const next = structuredClone(live) as typeof pod
      ;(next.metadata as Record<string, unknown>)['annotations'] = { ...((next.metadata as Record<string, unknown>)['annotations'] as object), [`k${i}`]: 'v' }
      const mf = updateManagedFields(live, next, `writer-${i}`, opts(new Date(T2.getTime() + i * 1000)))
      live = withFields(next, mf)
    }
    const names = ((live.metadata as { managedFields: ManagedFieldsEntry[] }).managedFields).map((e) => e.manager)
    assert.equal(names.length, 10)
    assert.equal(names.includes('ancient-changes'), true)
    assert.equal(names.includes('creator'), false)
  })
})
