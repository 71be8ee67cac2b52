import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiListJsonByteChunks, apiObjectJson, apiObjectJsonBytes, apiObjectJsonBytesInSteps, watchEventJson } from '../../../core/encoding/api-json.js'
import { goEncodedCopy } from '../../../core/encoding/canonical.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { deepFreeze } from '../../../core/storage/objects.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const configMap = (i: number) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: `cm-${i}`, namespace: 'default', resourceVersion: String(100 + i), labels: { i: String(i) } },
  data: { text: `<value ${i} & more>`, 'odd\u2028key': 'x' },
})

/** The same data, never frozen: encoded along the usual path every time. */
const thawed = <T>(v: T): T => structuredClone(v)

describe('encodings kept beside immutable objects', () => {
  it('an immutable object, and lists of them, read and written whole or in pieces, give the same bytes as changeable copies', () => {
    const frozen: Array<Record<string, unknown>> = Array.from({ length: 30 }, (_, i) => deepFreeze(configMap(i)))
    // Out of Go's order: the field-by-field path.
    frozen.push(deepFreeze({ data: { b: '1' }, metadata: { name: 'x' }, kind: 'ConfigMap', apiVersion: 'v1' }))
    for (const obj of frozen) {
      assert.equal(apiObjectJson(obj), apiObjectJson(thawed(obj)))
      // A second time: the kept text.
      assert.equal(apiObjectJson(obj), apiObjectJson(thawed(obj)))
    }
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '900', continue: 'a<b' }, items: frozen }
    const copy = { ...list, items: frozen.map(thawed) }
    assert.equal(apiObjectJson(list), apiObjectJson(copy))
    assert.equal([...apiListJsonByteChunks(list, 7)].map((c) => new TextDecoder().decode(c)).join(''), apiObjectJson(copy))
    // A list mixing kept and changeable items.
    const mixed = { ...list, items: [frozen[0], thawed(frozen[1])] }
    assert.equal(apiObjectJson(mixed), apiObjectJson({ ...list, items: [thawed(frozen[0]), thawed(frozen[1])] }))
    // Custom resources' lists keep their items' kind and apiVersion.
    const widgets = Array.from({ length: 3 }, (_, i) => deepFreeze({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `w${i}` }, spec: { s: '<>' } }))
    const widgetList = { apiVersion: 'example.com/v1', kind: 'WidgetList', metadata: {}, items: widgets }
    assert.equal(apiObjectJson(widgetList), apiObjectJson({ ...widgetList, items: widgets.map(thawed) }))
  })

  it('a Table whose rows carry immutable objects, metadata or whole, is the text a changeable copy gets', () => {
    const frozen = Array.from({ length: 4 }, (_, i) => deepFreeze(configMap(i)))
    const partial = frozen.map((o) => deepFreeze({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata }))
    const table = (objects: unknown[]) => ({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '42' },
      columnDefinitions: [{ name: 'Name', type: 'string', format: 'name', description: 'a <name>', priority: 0 }],
      // Cells of every kind a column gives, one to be escaped, and a row with conditions.
      rows: objects.map((object, i) => ({ cells: [`cm-${i} <&>`, i, i % 2 === 0, '5m'], ...(i === 1 ? { conditions: [{ type: 'Completed', status: 'True' }] } : {}), object })),
    })
    for (const objects of [frozen, partial]) {
      assert.equal(apiObjectJson(table(objects)), apiObjectJson(table(objects.map(thawed))))
      assert.equal(apiObjectJson(table(objects)), apiObjectJson(table(objects.map(thawed))), 'again, from the kept texts')
    }
    // A watch event of such a table (kubectl get -w), its later events without column definitions.
    const { columnDefinitions: _columns, ...later } = table(partial)
    assert.equal(watchEventJson('MODIFIED', table(partial)), watchEventJson('MODIFIED', table(partial.map(thawed))))
    assert.equal(watchEventJson('MODIFIED', later), watchEventJson('MODIFIED', { ...later, rows: later.rows.map((r) => ({ ...r, object: thawed(r.object) })) }))
    assert.match(watchEventJson('MODIFIED', later), /^\{"type":"MODIFIED","object":\{"kind":"Table",.*"columnDefinitions":null,"rows":\[/)
    // A row without an immutable object: the table is written whole, as before.
    assert.equal(apiObjectJson(table([frozen[0], thawed(frozen[1])])), apiObjectJson(table([thawed(frozen[0]), thawed(frozen[1])])))
    assert.match(apiObjectJson(table(partial)), /^\{"kind":"Table","apiVersion":"meta.k8s.io\/v1",.*"rows":\[\{"cells":\["cm-0 \\u003c\\u0026\\u003e",0,true,"5m"\],"object":\{"kind":"PartialObjectMetadata"/)
  })

  it('a watch event of an immutable object, sent to many watchers, is the line a changeable copy gets', () => {
    const obj = deepFreeze(configMap(3))
    for (const type of ['ADDED', 'MODIFIED', 'DELETED']) {
      assert.equal(watchEventJson(type, obj), watchEventJson(type, thawed(obj)))
      assert.equal(watchEventJson(type, obj), watchEventJson(type, thawed(obj)))
    }
    assert.match(watchEventJson('ADDED', obj), /^\{"type":"ADDED","object":\{"kind":"ConfigMap".*\\u003cvalue 3 \\u0026 more\\u003e.*\}\n$/)
  })

  it("an immutable object's answer bytes are its text's UTF-8, made once; a changeable object's follow its changes", () => {
    const obj = deepFreeze(configMap(4))
    const bytes = apiObjectJsonBytes(obj)
    assert.equal(new TextDecoder().decode(bytes), apiObjectJson(thawed(obj)))
    assert.equal(apiObjectJsonBytes(obj), bytes, 'the kept bytes, not a new encoding')
    const changeable = { ...configMap(5), data: { text: 'before \u00e9' } }
    assert.equal(new TextDecoder().decode(apiObjectJsonBytes(changeable)), apiObjectJson(changeable))
    changeable.data.text = 'after'
    assert.match(new TextDecoder().decode(apiObjectJsonBytes(changeable)), /"after"/)
  })

  it('an object frozen only at its top is not taken for immutable: its text follows its changes', () => {
    const obj = Object.freeze({ ...configMap(1), data: { text: 'before' } })
    const first = apiObjectJson(obj)
    obj.data.text = 'after'
    assert.notEqual(apiObjectJson(obj), first)
    assert.match(apiObjectJson(obj), /"after"/)
  })

  it('an answer of megabytes written in steps has the bytes written at once, kept for an immutable object', () => {
    const wide = goEncodedCopy({ ...configMap(1), data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}<&>`, `v\u2028${i}`])) })
    // Keys JavaScript enumerates before the others (integer-like), out of Go's order: encoded at once, the same way.
    const numeric = { ...configMap(2), data: { '10': 'a', '9': 'b' } }
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [configMap(3)] }
    for (const value of [wide, numeric, list, configMap(4)] as Record<string, unknown>[]) {
      const { value: bytes, checkpoints } = runCounting(apiObjectJsonBytesInSteps(thawed(value)))
      assert.deepEqual(bytes, apiObjectJsonBytes(thawed(value)))
      if (value === wide) assert.ok(checkpoints >= 5, `${checkpoints} checkpoints`)
    }
    const frozen = deepFreeze(thawed(wide))
    const first = runAtOnce(apiObjectJsonBytesInSteps(frozen))
    assert.equal(runAtOnce(apiObjectJsonBytesInSteps(frozen)), first, 'kept')
    assert.equal(apiObjectJsonBytes(frozen), first, 'kept for the path at once too')
  })
})
