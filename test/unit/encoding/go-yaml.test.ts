import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiObjectYaml, compareYamlKeys } from '../../../core/encoding/go-yaml.js'

describe("YAML as upstream's serializer writes it (go-yaml v2)", () => {
  it('sorts keys in natural order: non-letters first, digit runs compared as numbers', () => {
    const keys = ['b', 'a10', 'a2', 'A', '_x', '1', 'a']
    assert.deepEqual(keys.sort(compareYamlKeys), ['_x', '1', 'A', 'a', 'a2', 'a10', 'b'])
  })

  it('writes every map sorted, lists not indented, and quotes what YAML 1.1 would read as another type', () => {
    const text = apiObjectYaml({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', creationTimestamp: '2024-01-01T00:00:00Z', finalizers: ['x'] },
      data: { on: 'yes', n: '1' },
    })
    assert.equal(
      text,
      'apiVersion: v1\ndata:\n  "n": "1"\n  "on": "yes"\nkind: ConfigMap\nmetadata:\n  creationTimestamp: "2024-01-01T00:00:00Z"\n  finalizers:\n  - x\n  name: c\n',
    )
  })
})
