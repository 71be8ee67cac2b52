import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyJsonPatch, mergePatch, mergePatchInSteps, parseJsonPatch } from '../../../core/patch/json-patch.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { StatusError } from '../../../core/machinery/status-error.js'

describe('merge patch (RFC 7386)', () => {
  it('merges objects, replaces arrays and deletes keys set to null', () => {
    assert.deepEqual(mergePatch({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { b: { c: null, x: 1 }, e: [2], f: 'g' }), {
      a: 1,
      b: { d: 3, x: 1 },
      e: [2],
      f: 'g',
    })
  })

  it('merges in steps (a patch of megabytes) as at once, over odd documents and a level of many keys', () => {
    const cases: [unknown, unknown][] = [
      [{ a: 1, b: { c: 2, d: 3 }, e: [1] }, { b: { c: null, x: 1 }, e: [2], f: 'g' }],
      ['scalar', { a: { b: null, c: [1, { d: 2 }] } }],
      [{ a: 1 }, [1, 2]],
      [{ a: { b: 1 } }, { a: null }],
      [JSON.parse('{"__proto__":{"x":1},"k":1}'), { k: null, n: { deep: { er: 1 } } }],
      [{ data: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v'])) }, { data: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i * 2}`, i % 3 ? 'w' : null])) }],
    ]
    for (const [target, patch] of cases) {
      const atOnce = mergePatch(structuredClone(target), patch)
      const inSteps = runAtOnce(mergePatchInSteps(structuredClone(target), patch))
      assert.deepStrictEqual(inSteps, atOnce)
      assert.equal(JSON.stringify(inSteps), JSON.stringify(atOnce), 'key order')
    }
  })
})

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { a: 'b' } }, list: [1, 2, 3] }
  const apply = (ops: unknown) => applyJsonPatch(doc, parseJsonPatch(ops))

  it('adds, removes, replaces, moves, copies and tests', async () => {
    assert.deepEqual(
      await apply([
        { op: 'add', path: '/metadata/labels/c', value: 'd' },
        { op: 'remove', path: '/list/0' },
        { op: 'replace', path: '/list/0', value: 9 },
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'copy', from: '/metadata/labels/a', path: '/copied' },
        { op: 'move', from: '/copied', path: '/moved' },
        { op: 'test', path: '/moved', value: 'b' },
      ]),
      { metadata: { labels: { a: 'b', c: 'd' } }, list: [9, 3, 4], moved: 'b' },
    )
  })

  it('escapes ~1 and ~0 in pointers', async () => {
    assert.deepEqual(await applyJsonPatch({ l: {} }, parseJsonPatch([{ op: 'add', path: '/l/a~1b~0c', value: 1 }])), {
      l: { 'a/b~c': 1 },
    })
  })

  it('refuses a failed test with 422 and leaves the input alone', async () => {
    const before = structuredClone(doc)
    await assert.rejects(
      () => apply([{ op: 'test', path: '/metadata/labels/a', value: 'x' }]),
      (e: unknown) => e instanceof StatusError && e.code === 422,
    )
    assert.deepEqual(doc, before)
  })

  it('refuses a path that does not exist with 422', async () => {
    await assert.rejects(
      () => apply([{ op: 'replace', path: '/nope/x', value: 1 }]),
      (e: unknown) => e instanceof StatusError && e.code === 422,
    )
  })

  it('refuses a document that is not a list of operations with 400', () => {
    for (const bad of [{ op: 'add' }, [{ op: 'jump', path: '/a' }], [{ op: 'add', path: '/a' }]]) {
      assert.throws(
        () => parseJsonPatch(bad),
        (e: unknown) => e instanceof StatusError && e.code === 400,
      )
    }
  })

  it('copies a large value in slices into an equal, separate copy', async () => {
    const big = { spec: { items: Array.from({ length: 50_000 }, (_, i) => ({ n: i, tags: ['a', { b: i }] })) } }
    const patched = (await applyJsonPatch(big, parseJsonPatch([{ op: 'copy', from: '/spec', path: '/copy' }]))) as typeof big & { copy: typeof big.spec }
    assert.deepEqual(patched.copy, big.spec)
    patched.copy.items[0]!.n = -1
    assert.equal(patched.spec.items[0]!.n, 0)
    assert.equal(big.spec.items[0]!.n, 0)
  })
})
