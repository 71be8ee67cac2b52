/**
 * cloneJson: the deep copy every store and request path hands out. It must
 * copy what structuredClone copies for JSON data, share nothing with its
 * source, and never let a key named `__proto__` become the copy's prototype.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cloneJson, cloneJsonInSteps } from '../../../core/machinery/object.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { runCounting } from '../../fixtures/checkpoints.js'

describe('cloneJson', () => {
  it('copies JSON data as structuredClone does, sharing nothing', () => {
    const source = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', labels: { app: 'x' }, managedFields: [{ manager: 'm', fieldsV1: { 'f:data': { '.': {} } } }] },
      data: { k: 'v' },
      list: [1, 'two', null, true, [3, { four: 4 }]],
      big: 3546343826724305832n,
      missing: undefined,
    }
    const copy = cloneJson(source)
    assert.deepStrictEqual(copy, structuredClone(source))
    copy.metadata.labels.app = 'changed'
    ;(copy.list[4] as [number, { four: number }])[1].four = 5
    copy.metadata.managedFields[0]!.fieldsV1['f:data']['.'] = { changed: true } as never
    assert.equal(source.metadata.labels.app, 'x')
    assert.deepEqual(source.list[4], [3, { four: 4 }])
    assert.deepEqual(source.metadata.managedFields[0]!.fieldsV1['f:data']['.'], {})
  })

  it('keeps an own __proto__ key a key: the copy’s prototype stays Object’s', () => {
    const hostile = JSON.parse('{"metadata":{"name":"a"},"__proto__":{"polluted":true},"spec":{"__proto__":{"admin":true}}}') as Record<string, unknown>
    const copy = cloneJson(hostile)
    assert.equal(Object.getPrototypeOf(copy), Object.prototype)
    assert.equal((copy as { polluted?: unknown }).polluted, undefined)
    assert.deepEqual(Object.keys(copy), ['metadata', '__proto__', 'spec'])
    assert.deepEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true })
    const spec = copy['spec'] as Record<string, unknown>
    assert.equal(Object.getPrototypeOf(spec), Object.prototype)
    assert.equal((spec as { admin?: unknown }).admin, undefined)
    assert.equal(({} as { polluted?: unknown }).polluted, undefined)
  })

  it('copies byte arrays and dates as values of their own kind', () => {
    const source = { bytes: new Uint8Array([1, 2, 3]), when: new Date(0) }
    const copy = cloneJson(source)
    assert.ok(copy.bytes instanceof Uint8Array)
    assert.deepEqual([...copy.bytes], [1, 2, 3])
    copy.bytes[0] = 9
    assert.equal(source.bytes[0], 1)
    assert.ok(copy.when instanceof Date)
    assert.notEqual(copy.when, source.when)
    assert.equal(copy.when.getTime(), 0)
  })

  it('copies in steps as at once, for odd values and a level of many keys, with checkpoints between', () => {
    const hostile = JSON.parse('{"metadata":{"name":"a"},"__proto__":{"polluted":true},"list":[1,null,{"b":[true]}]}') as Record<string, unknown>
    const inSteps = runAtOnce(cloneJsonInSteps(hostile))
    assert.deepStrictEqual(inSteps, cloneJson(hostile))
    assert.deepEqual(Object.keys(inSteps), ['metadata', '__proto__', 'list'])
    assert.equal(Object.getPrototypeOf(inSteps), Object.prototype)
    const odd = { bytes: new Uint8Array([1, 2]), when: new Date(0), big: 1n }
    const oddCopy = runAtOnce(cloneJsonInSteps(odd))
    assert.deepStrictEqual(oddCopy, cloneJson(odd))
    assert.notEqual(oddCopy.bytes, odd.bytes)
    const wide = { data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, { v: i }])) }
    const { value: copy, checkpoints } = runCounting(cloneJsonInSteps(wide))
    assert.deepStrictEqual(copy, wide)
    assert.notEqual(copy.data['k0'], wide.data['k0'])
    assert.ok(checkpoints >= 9, `${checkpoints} checkpoints`)
  })
})
