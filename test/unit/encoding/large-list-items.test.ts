import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiListJsonByteChunks, apiObjectJson, largeListItemsInSteps } from '../../../core/encoding/api-json.js'
import { canonicalCopy } from '../../../core/encoding/canonical.js'
import { markedLarge } from '../../../core/machinery/large-objects.js'
import { deepFreeze } from '../../../core/storage/objects.js'
import { runCounting } from '../../fixtures/checkpoints.js'

function wideConfigMap(name: string, keys: number): Record<string, unknown> {
  const data: Record<string, string> = {}
  for (let i = 0; i < keys; i++) data[`key-${i}`] = `<value ${i}>`
  // As the stores keep objects: in Go's order (a map's keys sorted).
  return deepFreeze(markedLarge(canonicalCopy({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' }, data })))
}

describe("a list's items of megabytes", () => {
  it('are encoded ahead in steps, and the list written from them is the list written at once', () => {
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: [wideConfigMap('a', 20_000), wideConfigMap('b', 20_000)] }
    const { checkpoints } = runCounting(largeListItemsInSteps(list))
    assert.ok(checkpoints >= 10, `${checkpoints} checkpoints`)
    // Encoded once: a second pass finds the bytes kept.
    assert.equal(runCounting(largeListItemsInSteps(list)).checkpoints, 0)
    const text = Buffer.concat([...apiListJsonByteChunks(list)]).toString('utf8')
    assert.equal(text, apiObjectJson(list))
    assert.match(text, /"key-0":"\\u003cvalue 0\\u003e"/)
  })
})
