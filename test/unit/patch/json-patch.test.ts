import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { JsonPatchFailure } from '../../../core/patch/json-patch-document.js'
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

  it('refuses a document that is not a list of operations with 400, in the words of the decoding asked for', () => {
    const refusal = (doc: unknown, strict: boolean) => {
      try {
        parseJsonPatch(doc, strict)
      } catch (e) {
        assert.ok(e instanceof StatusError && e.code === 400, String(e))
        return e.message
      }
      return 'accepted'
    }
    assert.equal(refusal({ op: 'add' }, true), 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp')
    assert.equal(refusal('text', true), 'error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp')
    assert.equal(refusal([{ op: 'add' }, 7], true), 'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp')
    assert.equal(refusal([{ op: 'add', path: 3 }, { op: true }], true), 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string')
    assert.equal(refusal({ op: 'add' }, false), 'json: cannot unmarshal object into Go value of type jsonpatch.Patch')
    assert.equal(refusal([true], false), 'json: cannot unmarshal bool into Go value of type jsonpatch.Operation')
    // What the operations mean is read only as each one runs.
    for (const strict of [true, false]) {
      assert.equal(refusal(null, strict), 'accepted')
      assert.equal(refusal([{ op: 'jump', path: '/a' }, { op: 'add' }, null], strict), 'accepted')
    }
  })

  it('fails an operation it cannot run as it runs, in the words of upstream\'s patch library', async () => {
    const failure = async (ops: unknown[]) => {
      try {
        await apply(ops)
      } catch (e) {
        assert.ok(e instanceof JsonPatchFailure, String(e))
        return e.message
      }
      return 'applied'
    }
    assert.equal(await failure([{ op: 'jump', path: '/a' }]), 'Unexpected kind: jump')
    assert.equal(await failure([null]), 'Unexpected kind: unknown')
    assert.equal(await failure([{ op: 'add', value: 1 }]), 'add operation failed to decode path: operation missing path field: missing value')
    assert.equal(await failure([{ op: 'move', path: '/b' }]), 'move operation failed to decode from: operation, missing from field: missing value')
    assert.equal(await failure([{ op: 'remove', path: '/metadata/nope' }]), "error in remove for path: '/metadata/nope': Unable to remove nonexistent key: nope: missing value")
    assert.equal(await failure([{ op: 'add', path: '/nope/x', value: 1 }]), 'add operation does not apply: doc is missing path: "/nope/x": missing value')
    assert.equal(await failure([{ op: 'add', path: '', value: {} }]), 'add operation does not apply: doc is missing path: "": missing value')
    assert.equal(await failure([{ op: 'add', path: '/list/x', value: 1 }]), "error in add for path: '/list/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax")
    assert.equal(await failure([{ op: 'add', path: '/list/5', value: 1 }]), "error in add for path: '/list/5': Unable to access invalid index: 5: invalid index referenced")
    assert.equal(await failure([{ op: 'replace', path: '/list/3', value: 1 }]), 'replace operation does not apply: doc is missing key: /list/3: Unable to access invalid index: 3: invalid index referenced')
    assert.equal(await failure([{ op: 'test', path: '/metadata/labels/a', value: 'x' }]), 'testing value /metadata/labels/a failed: test failed')
    assert.equal(await failure([{ op: 'test', path: '/metadata/labels/a' }]), 'testing value /metadata/labels/a failed: test failed')
  })

  it('applies what upstream\'s patch library lets through where RFC 6902 would refuse', async () => {
    // A replace of a missing field adds it; an add or replace with no value writes null.
    assert.deepEqual(await apply([{ op: 'replace', path: '/metadata/labels/new', value: 'x' }]), { ...doc, metadata: { labels: { a: 'b', new: 'x' } } })
    assert.deepEqual(await apply([{ op: 'add', path: '/metadata/labels/n' }]), { ...doc, metadata: { labels: { a: 'b', n: null } } })
    // A test of a missing field against null passes; a copy from one copies null.
    assert.deepEqual(await apply([{ op: 'test', path: '/metadata/nope', value: null }]), doc)
    assert.deepEqual(await apply([{ op: 'copy', from: '/metadata/nope', path: '/copied' }]), { ...doc, copied: null })
    // Negative indexes count from the end; an insert at -1 appends.
    assert.deepEqual(await apply([{ op: 'replace', path: '/list/-1', value: 9 }]), { ...doc, list: [1, 2, 9] })
    assert.deepEqual(await apply([{ op: 'add', path: '/list/-1', value: 4 }]), { ...doc, list: [1, 2, 3, 4] })
    assert.deepEqual(await apply([{ op: 'remove', path: '/list/-3' }]), { ...doc, list: [2, 3] })
    // The text before a pointer's first slash is set aside.
    assert.deepEqual(await apply([{ op: 'add', path: 'metadata/x', value: 1 }]), { ...doc, x: 1 })
    // A replace of the whole document takes an object; any other value leaves it as it was.
    assert.deepEqual(await apply([{ op: 'replace', path: '', value: { kind: 'Other' } }]), { kind: 'Other' })
    assert.deepEqual(await apply([{ op: 'replace', path: '', value: 3 }]), doc)
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
