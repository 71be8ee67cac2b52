import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiObjectYaml, compareYamlKeys, compareYamlKeysByCodePoints } from '../../../core/encoding/go-yaml.js'

describe("YAML as upstream's serializer writes it (go-yaml v2)", () => {
  it('sorts keys in natural order: non-letters first, digit runs compared as numbers', () => {
    const keys = ['b', 'a10', 'a2', 'A', '_x', '1', 'a']
    assert.deepEqual(keys.sort(compareYamlKeys), ['_x', '1', 'A', 'a', 'a2', 'a10', 'b'])
  })

  it('orders keys by its quick paths exactly as code point by code point', () => {
    const pieces = ['a', 'b', 'Z', 'é', 'ß', '0', '1', '9', '10', '007', '_', '.', '-', ':', 'f:', '💥', '\ud800', '日']
    let state = 7
    const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32
    const key = () => Array.from({ length: Math.floor(next() * 5) }, () => pieces[Math.floor(next() * pieces.length)]).join('')
    for (let i = 0; i < 20000; i++) {
      const [a, b] = [key(), key()]
      assert.equal(Math.sign(compareYamlKeys(a, b)), Math.sign(compareYamlKeysByCodePoints(a, b)), `${JSON.stringify(a)} against ${JSON.stringify(b)}`)
    }
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

  it('sorts keys that are array indexes among the others, as go-yaml does (an object lists them first)', () => {
    const text = apiObjectYaml({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: '2024-01-01T00:00:00Z' }, data: { '1': 'a', _x: 'b', '.z': 'c', '10': 'd', '2': 'e' } })
    assert.match(text, /\ndata:\n {2}\.z: c\n {2}_x: b\n {2}"1": a\n {2}"2": e\n {2}"10": d\n/)
  })

  it("leaves FieldsV1's `.` and other points without a digit plain, as go-yaml does, and quotes real floats", () => {
    const text = apiObjectYaml({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', creationTimestamp: '2024-01-01T00:00:00Z', managedFields: [{ manager: 'm', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } }] },
      data: { a: '.', b: '1.', c: '.5', d: '-.', e: '.inf', f: '1_0.5' },
    })
    assert.match(text, /\n {8}\.: \{\}\n {8}f:a: \{\}\n/)
    assert.match(text, /\n {2}a: \.\n {2}b: "1\."\n {2}c: "\.5"\n {2}d: -\.\n {2}e: "\.inf"\n {2}f: "1_0\.5"\n/)
  })

  it("writes the JSON form: Go's empty values, and a built-in list's items without kind and apiVersion", () => {
    const event = { kind: 'Event', apiVersion: 'v1', metadata: { name: 'e', creationTimestamp: '2024-01-01T00:00:00Z', labels: {} }, involvedObject: {}, count: 0 }
    assert.equal(
      apiObjectYaml({ kind: 'EventList', apiVersion: 'v1', metadata: {}, items: [event] }),
      'apiVersion: v1\nitems:\n- eventTime: null\n  firstTimestamp: null\n  involvedObject: {}\n  lastTimestamp: null\n  metadata:\n' +
        '    creationTimestamp: "2024-01-01T00:00:00Z"\n    name: e\n  reportingComponent: ""\n  reportingInstance: ""\n  source: {}\nkind: EventList\nmetadata: {}\n',
    )
  })
})
