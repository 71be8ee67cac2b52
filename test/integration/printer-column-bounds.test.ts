/**
 * A printer column's JSONPath is evaluated with a bound on the values it
 * steps through: a path that repeats `..` over a large custom resource gets
 * an empty cell, as upstream shows one for a path that fails, while the
 * other columns are filled and another client's GET is served meanwhile.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileJsonPath, JsonPathError, MAX_JSONPATH_VALUES } from '../../core/crd/jsonpath.js'
import { installDefinition } from './crd-fixtures.js'
import { startServer } from './harness.js'

const GROUP = 'columns.example.com'
const BLOBS = `/apis/${GROUP}/v1/namespaces/default/blobs`
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1'
const PATHOLOGICAL = '...*...*...*...*'

const definition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `blobs.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'blobs', singular: 'blob', kind: 'Blob' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        additionalPrinterColumns: [
          { name: 'Label', type: 'string', jsonPath: '.spec.label' },
          { name: 'Everything', type: 'string', jsonPath: PATHOLOGICAL },
        ],
      },
    ],
  },
}

/** A spec nested 40 levels, each level holding a hundred small strings: some 4000 values, many thousands of subtrees. */
function bigSpec(label: string): Record<string, unknown> {
  let inner: Record<string, unknown> = { leaf: 'x' }
  for (let level = 0; level < 40; level++) {
    inner = { down: inner, items: Array.from({ length: 100 }, (_, i) => `item-${level}-${i}`) }
  }
  return { label, tree: inner }
}

/** `.spec['a','a',…]` three times over: a thousand names a level, a billion values unbounded. */
const UNIONS = '.spec' + `[${Array(1000).fill("'a'").join(',')}]`.repeat(3)

/** A CRD of Unions whose one extra column is `path`. */
function unionDefinition(path: string) {
  const version = definition.spec.versions[0]
  return {
    ...definition,
    metadata: { name: `unions.${GROUP}` },
    spec: {
      ...definition.spec,
      names: { plural: 'unions', singular: 'union', kind: 'Union' },
      versions: [{ ...version, additionalPrinterColumns: [{ name: 'Unions', type: 'string', jsonPath: path }] }],
    },
  }
}

describe('printer columns in bounded time', { timeout: 120_000 }, () => {
  it('stops an evaluation past its bound with a JSONPath error, and leaves simple paths alone', () => {
    const path = compileJsonPath(`{${PATHOLOGICAL}}`, { allowMissingKeys: true })
    assert.ok(typeof path !== 'string', String(path))
    assert.throws(() => path.find({ spec: bigSpec('a') }), (err: unknown) => err instanceof JsonPathError && err.message.includes(String(MAX_JSONPATH_VALUES)))
    const simple = compileJsonPath('{.spec.label}')
    assert.ok(typeof simple !== 'string')
    assert.deepEqual(simple.find({ spec: bigSpec('a') }), [['a']])
    // The bound is per evaluation: the same path evaluates again from a fresh budget.
    const small = compileJsonPath('{..leaf}')
    assert.ok(typeof small !== 'string')
    for (let i = 0; i < 3; i++) assert.deepEqual(small.find(bigSpec('a')), [['x']])
  })

  it('charges the values unions of names repeat, stopping at the bound before they multiply', () => {
    const path = compileJsonPath(`{${UNIONS}}`, { allowMissingKeys: true })
    assert.ok(typeof path !== 'string', String(path))
    assert.throws(() => path.find({ spec: { a: { a: { a: 1 } } } }), (err: unknown) => err instanceof JsonPathError && err.message.includes(String(MAX_JSONPATH_VALUES)))
    // Unions, literals and names within the bound still give every value.
    const small = compileJsonPath("{.spec['a','a'].a}")
    assert.ok(typeof small !== 'string')
    assert.deepEqual(small.find({ spec: { a: { a: 1 } } }), [[1, 1]])
  })

  it('lists an object as a Table with an empty cell for a column of repeated unions', async () => {
    const api = await startServer()
    await installDefinition(api, unionDefinition(UNIONS))
    const unions = `/apis/${GROUP}/v1/namespaces/default/unions`
    const created = await api.post(unions, { apiVersion: `${GROUP}/v1`, kind: 'Union', metadata: { name: 'u' }, spec: { a: { a: { a: 1 } } } })
    assert.equal(created.status, 201, created.text.slice(0, 300))
    const listed = await api.get(unions, { headers: { accept: TABLE } })
    assert.equal(listed.status, 200, listed.text.slice(0, 300))
    const rows = listed.body.rows as Array<{ cells: unknown[] }>
    assert.deepEqual(
      rows.map((r) => [r.cells[0], r.cells[1]]),
      [['u', null]],
    )
  })

  it("lists big objects as a Table with the pathological column empty, while another client's GET is served first", async () => {
    const api = await startServer()
    await installDefinition(api, definition)
    for (let i = 0; i < 4; i++) {
      const r = await api.post(BLOBS, { apiVersion: `${GROUP}/v1`, kind: 'Blob', metadata: { name: `b${i}` }, spec: bigSpec(`l${i}`) })
      assert.equal(r.status, 201, r.text.slice(0, 300))
    }
    const order: string[] = []
    const table = api.get(BLOBS, { headers: { accept: TABLE } }).then((r) => (order.push('table'), r))
    const get = new Promise((resolve) => setTimeout(resolve, 0))
      .then(() => api.get('/api/v1/namespaces/default'))
      .then((r) => (order.push('get'), r))
    const [listed, got] = await Promise.all([table, get])
    assert.equal(got.status, 200)
    assert.equal(listed.status, 200, listed.text.slice(0, 300))
    assert.deepEqual(
      listed.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Label', 'Everything', 'Age'].filter((n) => listed.body.columnDefinitions.some((c: { name: string }) => c.name === n)),
    )
    const rows = listed.body.rows as Array<{ cells: unknown[] }>
    assert.deepEqual(
      rows.map((r) => [r.cells[0], r.cells[1], r.cells[2]]),
      [0, 1, 2, 3].map((i) => [`b${i}`, `l${i}`, null]),
    )
    assert.deepEqual(order, ['get', 'table'], 'the GET waited for the whole table')
  })

  it("shares the bound among a row's columns: of 300 columns each stepping through 74,000 values, two are filled and the rest empty, in every row and a GET", async () => {
    const api = await startServer()
    const columns = Array.from({ length: 300 }, (_, i) => ({ name: `C${i}`, type: 'string', jsonPath: '.spec..a' }))
    const version = { ...definition.spec.versions[0], additionalPrinterColumns: columns }
    const wide = { ...definition, metadata: { name: `wides.${GROUP}` }, spec: { ...definition.spec, names: { plural: 'wides', singular: 'wide', kind: 'Wide' }, versions: [version] } }
    await installDefinition(api, wide)
    const wides = `/apis/${GROUP}/v1/namespaces/default/wides`
    // `..a` over 5000 items charges some 74,000 values: 300 such columns unbounded held the thread for seconds per row.
    const spec = { items: Array.from({ length: 5000 }, (_, i) => ({ a: `v${i}` })) }
    for (const name of ['w0', 'w1']) {
      const created = await api.post(wides, { apiVersion: `${GROUP}/v1`, kind: 'Wide', metadata: { name }, spec })
      assert.equal(created.status, 201, created.text.slice(0, 300))
    }
    const expected = (name: string) => [name, 'v0', 'v0', ...Array<null>(298).fill(null)]
    const listed = await api.get(wides, { headers: { accept: TABLE } })
    assert.equal(listed.status, 200, listed.text.slice(0, 300))
    const rows = listed.body.rows as Array<{ cells: unknown[] }>
    assert.deepEqual(
      rows.map((r) => r.cells.slice(0, 301)),
      [expected('w0'), expected('w1')],
    )
    const one = await api.get(`${wides}/w1`, { headers: { accept: TABLE } })
    assert.equal(one.status, 200, one.text.slice(0, 300))
    assert.deepEqual(one.body.rows[0].cells.slice(0, 301), expected('w1'))
  })
})
