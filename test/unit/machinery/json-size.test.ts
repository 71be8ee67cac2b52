import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hasMoreValuesThan } from '../../../core/machinery/json-size.js'

describe('whether a JSON value is large', () => {
  it('counts objects, arrays and scalars, the value itself included', () => {
    const value = { a: [1, 2], b: { c: null } } // the object, a, 1, 2, b, c: 6 values
    assert.equal(hasMoreValuesThan(value, 6), false)
    assert.equal(hasMoreValuesThan(value, 5), true)
    assert.equal(hasMoreValuesThan('scalar', 1), false)
    assert.equal(hasMoreValuesThan('scalar', 0), true)
  })

  it('counts own keys only, __proto__ among them', () => {
    const inherited = Object.create({ hidden: 1, other: 2 }) as Record<string, unknown>
    inherited['own'] = 1
    assert.equal(hasMoreValuesThan(inherited, 2), false)
    const proto = JSON.parse('{"__proto__": {"a": 1}}') as unknown
    assert.equal(hasMoreValuesThan(proto, 2), true)
  })

  it('reads a wide level no further than the limit', () => {
    let read = 0
    const wide: Record<string, unknown> = {}
    for (let i = 0; i < 100_000; i++) {
      Object.defineProperty(wide, `k${i}`, { enumerable: true, get: () => ++read })
    }
    assert.equal(hasMoreValuesThan(wide, 10), true)
    assert.ok(read <= 10, `${read} values read`)
    assert.equal(hasMoreValuesThan([[1, 2, 3], new Array(100_000).fill(0)], 10), true)
  })
})
