/**
 * Large JSON bodies are checked, parsed and scanned for duplicate fields in
 * time slices: a megabyte create or patch is answered as before while
 * another client's GET, arriving after it, is served first.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { besideAGet, startServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

/** A ConfigMap body of `count` small data fields (about 20 bytes each), its text written by hand to hold a duplicate when asked. */
function bigConfigMap(name: string, count: number, duplicate = false): string {
  const fields = Array.from({ length: count }, (_, i) => `"k${i}":"v${i}"`)
  if (duplicate) fields.push('"k0":"again"')
  return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{${fields.join(',')}}}`
}

describe('large JSON bodies in slices', { timeout: 120_000 }, () => {
  it("creates a ConfigMap of 40000 fields while another client's GET is served first", async () => {
    const api = await startServer()
    // 40000 rather than more: with their managed fields, the object stays within what etcd stores (1.5 MiB).
    const { answer, order } = await besideAGet(api, () => api.post(CM, bigConfigMap('big', 40_000)))
    assert.equal(answer.status, 201, answer.text.slice(0, 300))
    assert.deepEqual(order, ['get', 'request'], 'the GET waited for the whole body')
    const stored = await api.get(`${CM}/big`)
    // The answer of a large write is written in steps: the same text as a GET's, written at once.
    assert.equal(answer.text, stored.text)
    assert.equal(Object.keys(stored.body.data).length, 40_000)
    assert.equal(stored.body.data.k39999, 'v39999')
    // Its fields are tracked as every write's are (no User-Agent: upstream's manager `unknown`), each key once.
    const [entry] = stored.body.metadata.managedFields
    assert.equal(entry.manager, 'unknown')
    assert.equal(Object.keys(entry.fieldsV1['f:data']).length, 40_001, 'the 40000 keys and `.`')
  })

  it('finds a duplicate field in a large body: Strict refuses it with 400 and stores nothing, Warn warns', async () => {
    const api = await startServer()
    const strict = await api.post(`${CM}?fieldValidation=Strict`, bigConfigMap('dup', 10_000, true))
    assert.equal(strict.status, 400, strict.text.slice(0, 300))
    assert.match(strict.body.message, /strict decoding error: duplicate field "data\.k0"$/)
    assert.equal((await api.get(`${CM}/dup`)).status, 404)
    const warned = await api.post(`${CM}?fieldValidation=Warn`, bigConfigMap('dup', 10_000, true))
    assert.equal(warned.status, 201)
    assert.match(warned.headers.get('warning') ?? '', /duplicate field \\"data\.k0\\"/)
    assert.equal((await api.get(`${CM}/dup`)).body.data.k0, 'again')
  })

  it('answers a large body that is not JSON with the parser error, and a merge patch of 60000 fields', async () => {
    const api = await startServer()
    const broken = await api.post(CM, `${bigConfigMap('broken', 10_000).slice(0, -2)},}`)
    assert.equal(broken.status, 400, broken.text.slice(0, 300))
    assert.match(broken.body.message, /^couldn't get version\/kind; json parse error: /)
    assert.equal((await api.post(CM, { metadata: { name: 'target' } })).status, 201)
    const patch = `{"data":{${Array.from({ length: 60_000 }, (_, i) => `"p${i}":"v"`).join(',')}}}`
    const { answer, order } = await besideAGet(api, () =>
      api.call('PATCH', `${CM}/target`, { body: patch, headers: { 'content-type': 'application/merge-patch+json' } }),
    )
    assert.equal(answer.status, 200, answer.text.slice(0, 300))
    assert.deepEqual(order, ['get', 'request'])
    assert.equal(Object.keys(answer.body.data).length, 60_000)
    assert.equal(answer.text, (await api.get(`${CM}/target`)).text)
  })
})
