import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isMarkedLarge, markedLarge } from '../../../core/machinery/large-objects.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { deepFreezeInSteps } from '../../../core/storage/objects.js'
import { deletedObject } from '../../../core/storage/written-object.js'
import { isDeepFrozen } from '../../../core/encoding/immutable.js'
import { runCounting } from '../../fixtures/checkpoints.js'

function wide(keys: number): KubeObject {
  const data: Record<string, string> = {}
  for (let i = 0; i < keys; i++) data[`k${i}`] = `v${i}`
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'wide', resourceVersion: '5' }, data }
}

describe('the objects a write and a delete hand on', () => {
  it('a delete copies the metadata alone, stamped with its revision and frozen, and keeps the stored object as it was', () => {
    const stored = markedLarge(wide(10))
    const deleted = deletedObject(stored, 9)
    assert.equal(deleted.metadata.resourceVersion, '9')
    assert.equal(stored.metadata.resourceVersion, '5')
    assert.equal(deleted['data'], stored['data'], 'the data is shared, not copied')
    assert.ok(isDeepFrozen(deleted) && isDeepFrozen(stored))
    assert.ok(isMarkedLarge(deleted), 'a large object stays marked large')
  })

  it('freezes an object of 50,000 values in steps, a checkpoint every few thousand', () => {
    const object = wide(50_000)
    const { value, checkpoints } = runCounting(deepFreezeInSteps(object))
    assert.ok(checkpoints >= 10, `${checkpoints} checkpoints`)
    assert.ok(Object.isFrozen(value['data']) && isDeepFrozen(value))
    assert.throws(() => ((value['data'] as Record<string, string>)['k1'] = 'x'))
  })
})
