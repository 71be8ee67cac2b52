import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiListJsonByteChunks, apiObjectJson, LIST_CHUNK_BYTES } from '../../../core/encoding/api-json.js'
import { deepFreeze } from '../../../core/storage/objects.js'

const configMap = (i: number) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: `cm-${i}`, namespace: 'default', resourceVersion: String(100 + i), labels: { i: String(i) } },
  data: { text: `<value ${i} & more>`, 'odd\u2028key': 'x' },
})

describe('a list written in pieces', () => {
  it('joins to the same bytes as the list written at once: built-in, custom and out-of-order items', () => {
    const lists: Array<Record<string, unknown>> = [
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '900', continue: 'abc' }, items: Array.from({ length: 250 }, (_, i) => configMap(i)) },
      // Fields out of Go's order take the field-by-field path.
      { apiVersion: 'v1', items: [{ data: { b: '1' }, metadata: { name: 'x' }, kind: 'ConfigMap', apiVersion: 'v1' }, configMap(1)], metadata: {}, kind: 'ConfigMapList' },
      {
        apiVersion: 'example.com/v1',
        kind: 'WidgetList',
        metadata: { resourceVersion: '7' },
        items: Array.from({ length: 120 }, (_, i) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w${i}` }, spec: { n: i, s: '<>' } })),
      },
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [] },
    ]
    for (const list of lists) {
      const chunks = [...apiListJsonByteChunks(list, 50)]
      assert.equal(chunks.map((c) => new TextDecoder().decode(c)).join(''), apiObjectJson(list), String(list['kind']))
      const items = list['items'] as unknown[]
      // The list's fields, a run of at most 50 items at a time, its end; a list without items in one piece.
      assert.equal(chunks.length, items.length ? Math.ceil(items.length / 50) + 2 : 1)
    }
  })
})

describe('a list written in pieces of bytes', () => {
  it('joins to the UTF-8 of the list written at once, kept items read twice alike', () => {
    const frozen = Array.from({ length: 230 }, (_, i) => deepFreeze(configMap(i)))
    const lists: Array<Record<string, unknown>> = [
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '900' }, items: frozen },
      // Kept and unkept items mixed, and items out of Go's order.
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [frozen[0], configMap(1), { data: { b: '1' }, metadata: { name: 'x' }, kind: 'ConfigMap', apiVersion: 'v1' }] },
      { apiVersion: 'example.com/v1', kind: 'WidgetList', metadata: {}, items: Array.from({ length: 3 }, (_, i) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w${i}` } })) },
      { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [] },
    ]
    const decoder = new TextDecoder()
    for (const list of lists) {
      for (const round of [1, 2]) {
        const chunks = [...apiListJsonByteChunks(list, 50)]
        assert.equal(chunks.map((c) => decoder.decode(c)).join(''), apiObjectJson(list), `${String(list['kind'])}, round ${round}`)
        const items = list['items'] as unknown[]
        assert.equal(chunks.length, items.length ? Math.ceil(items.length / 50) + 2 : 1)
      }
    }
  })

  it('hands out a run of kept items as it was while the run holds the same objects, and joins it anew once one changed', () => {
    const decoder = new TextDecoder()
    const frozen = Array.from({ length: 150 }, (_, i) => deepFreeze(configMap(i)))
    const listOf = (items: unknown[]) => ({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '900' }, items })
    const runs = (list: Record<string, unknown>) => {
      const chunks = [...apiListJsonByteChunks(list, 50)]
      assert.equal(chunks.map((c) => decoder.decode(c)).join(''), apiObjectJson(list))
      return chunks.slice(1, -1)
    }
    const first = runs(listOf(frozen))
    const again = runs(listOf([...frozen]))
    for (let i = 0; i < 3; i++) assert.equal(again[i]!.buffer, first[i]!.buffer, `run ${i} copied again`)
    // The middle run's last object replaced by a new version, its first kept: that run alone is joined again.
    const changed = [...frozen]
    changed[99] = deepFreeze({ ...configMap(99), data: { text: 'changed', 'odd\u2028key': 'x' } })
    const after = runs(listOf(changed))
    assert.equal(after[0]!.buffer, first[0]!.buffer)
    assert.notEqual(after[1]!.buffer, first[1]!.buffer)
    assert.match(decoder.decode(after[1]), /"changed"/)
    assert.equal(after[2]!.buffer, first[2]!.buffer)
    // One object fewer before it shifts every later run: each is joined for what it now holds.
    const shorter = frozen.filter((_, i) => i !== 10)
    assert.equal(runs(listOf(shorter)).length, 3)
  })
})

describe('a list of large objects written in pieces', () => {
  it(`cuts its runs once they hold ${LIST_CHUNK_BYTES} bytes, however few their items, and joins to the list written at once`, () => {
    const decoder = new TextDecoder()
    const large = (i: number) => deepFreeze({ ...configMap(i), data: { blob: String(i).repeat(400 * 1024) } })
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '900' }, items: Array.from({ length: 7 }, (_, i) => large(i)) }
    for (const round of [1, 2]) {
      const chunks = [...apiListJsonByteChunks(list, 100)]
      assert.equal(chunks.map((c) => decoder.decode(c)).join(''), apiObjectJson(list), `round ${round}`)
      const runs = chunks.slice(1, -1)
      // Items of some 400 KiB: three to a run (the third takes it past a MiB), the last run the one left over.
      assert.deepEqual(runs.map((run) => (decoder.decode(run).match(/"blob"/g) ?? []).length), [3, 3, 1], `round ${round}`)
      for (const run of runs) assert.ok(run.byteLength < LIST_CHUNK_BYTES + 500 * 1024)
    }
  })
})
