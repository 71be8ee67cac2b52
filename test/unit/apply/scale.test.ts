/** managedFields through the scale subresource, as upstream's ScaleHandler folds them into the parent's entries. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { scaleManagedFields, type ManagedFieldsEntry } from '../../../core/apply/index.js'

const NOW = new Date('2026-01-02T03:04:05Z')
const REPLICAS = [{ field: 'spec' }, { field: 'replicas' }]

const entry = (manager: string, operation: 'Apply' | 'Update', fieldsV1: Record<string, unknown>, time = '2026-01-01T00:00:00Z'): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: 'apps/v1',
  time,
  fieldsType: 'FieldsV1',
  fieldsV1,
})

const write = (parentEntries: ManagedFieldsEntry[], oldReplicas: number, newReplicas: number) =>
  scaleManagedFields({ parentEntries, parentApiVersion: 'apps/v1', replicasPath: REPLICAS, oldReplicas, newReplicas, manager: 'scaler', now: NOW })

describe('managedFields through the scale subresource', () => {
  it('gives the replicas to the scale manager under subresource scale, without a time, and keeps the rest of the owner (Apply sorts first)', () => {
    const applier = entry('kubectl', 'Apply', { 'f:spec': { 'f:replicas': {}, 'f:selector': {} } })
    assert.deepEqual(write([applier], 2, 4), [
      { ...applier, fieldsV1: { 'f:spec': { 'f:selector': {} } } },
      { manager: 'scaler', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } }, subresource: 'scale' },
    ])
  })

  it('drops an owner left with nothing once its replicas are taken', () => {
    const owner = entry('hpa', 'Update', { 'f:spec': { 'f:replicas': {} } })
    assert.deepEqual(
      write([owner], 2, 3).map((e) => [e.manager, e.subresource]),
      [['scaler', 'scale']],
    )
  })

  it('records nothing when nobody owned the replicas (an object not tracked there stays so)', () => {
    const other = entry('kubectl', 'Apply', { 'f:spec': { 'f:selector': {} } })
    assert.deepEqual(write([other], 2, 5), [other])
  })
})
