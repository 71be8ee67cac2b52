import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { applyJsonPatch, parseJsonPatch } from '../../../core/patch/json-patch.js'
import { StatusError } from '../../../core/machinery/status-error.js'

/** Operations over a few paths that exist, may exist, or point into copies of each other. */
const pointer = fc.constantFrom('', '/a', '/a/b', '/a/b/0', '/a/b/-', '/c', '/c/d', '/a/c', '/a/b/1', '/x', '/__proto__', '/__proto__/p', '/toString')
const value = fc.oneof(fc.constant({ d: [1, { e: 2 }] }), fc.constant([0]), fc.integer({ min: 0, max: 3 }), fc.constant('s'), fc.constant(null))
const operation = fc.oneof(
  fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value }),
  fc.record({ op: fc.constant('remove'), path: pointer }),
  fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }),
)

async function outcome(target: unknown, ops: unknown[]): Promise<{ value: unknown } | { code: number; message: string }> {
  try {
    return { value: await applyJsonPatch(target, parseJsonPatch(ops)) }
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err))
    return { code: err.code, message: err.message }
  }
}

/** Every object and array in `value`, to see that two results share none. */
function nodes(value: unknown, into = new Set<object>()): Set<object> {
  if (value !== null && typeof value === 'object') {
    into.add(value)
    for (const child of Object.values(value)) nodes(child, into)
  }
  return into
}

describe('JSON patch copied on write', () => {
  it('leaves the target and the operations as they were, and gives the same answer each time, sharing nothing with them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 8 }), async (generated) => {
        // As a request body decodes them: plain objects.
        const ops = JSON.parse(JSON.stringify(generated)) as unknown[]
        const target = { a: { b: [1, { z: 1 }] }, c: { d: 'x' } }
        const before = structuredClone(target)
        const opsBefore = structuredClone(ops)
        const first = await outcome(target, ops)
        const second = await outcome(target, ops)
        assert.deepEqual(target, before)
        assert.deepEqual(ops, opsBefore)
        assert.deepEqual(second, first)
        assert.equal(Object.getPrototypeOf({}), Object.prototype)
        assert.equal(({} as Record<string, unknown>)['p'], undefined)
        if ('value' in first && 'value' in second) {
          const theirs = new Set([...nodes(target), ...nodes(ops), ...nodes(second.value)])
          for (const node of nodes(first.value)) assert.ok(!theirs.has(node), 'a node of the result is shared')
          // No node appears twice in one result: a later change to one place cannot show in another.
          const seen = new Set<object>()
          const walk = (v: unknown): void => {
            if (v === null || typeof v !== 'object') return
            assert.ok(!seen.has(v), 'a node appears twice in the result')
            seen.add(v)
            for (const child of Object.values(v)) walk(child)
          }
          walk(first.value)
        }
      }),
      { numRuns: 2000, seed: 14 },
    )
  })

  it('gives copies that change apart from their source', async () => {
    const patched = (await applyJsonPatch({ a: { b: [1] } }, parseJsonPatch([
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'add', path: '/c/b/-', value: 2 },
      { op: 'copy', from: '/c', path: '/a/c' },
      { op: 'add', path: '/a/c/x', value: 3 },
    ]))) as Record<string, unknown>
    assert.deepEqual(patched, { a: { b: [1], c: { b: [1, 2], x: 3 } }, c: { b: [1, 2] } })
  })

  it('refuses a pointer through __proto__ as a missing field, leaving Object.prototype alone', async () => {
    assert.deepEqual(await outcome({ a: 1 }, [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]), {
      code: 422,
      message: 'add operation does not apply: doc is missing path: "/__proto__/polluted": missing value',
    })
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
    assert.deepEqual(await outcome({ a: 1 }, [{ op: 'remove', path: '/toString' }]), { code: 422, message: "error in remove for path: '/toString': Unable to remove nonexistent key: toString: missing value" })
    const own = (await outcome({ a: 1 }, [{ op: 'add', path: '/__proto__', value: { p: 1 } }])) as { value: Record<string, unknown> }
    assert.ok(Object.hasOwn(own.value, '__proto__'))
    assert.equal(Object.getPrototypeOf(own.value), Object.prototype)
  })

  it('refuses copies that double the document for their size, as before', async () => {
    const ops = Array.from({ length: 64 }, (_, i) => ({ op: 'copy', from: '/spec', path: `/spec/c${i}` }))
    const answer = await outcome({ spec: { a: { b: [1, 2] } } }, ops)
    assert.ok('code' in answer && answer.code === 422, JSON.stringify(answer))
    assert.match(answer.message, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/)
  })
})
