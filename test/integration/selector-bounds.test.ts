/**
 * Selectors in a URL are bounded as upstream bounds them, by the request
 * line and headers a request may carry (1 MiB), and are parsed in slices:
 * a LIST with a selector of tens of thousands of terms is answered while
 * another client's GET is served.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_HEADER_BYTES } from '../../core/machinery/limits.js'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

async function withConfigMaps(): Promise<TestClient> {
  const api = await startServer()
  for (const [name, labels] of [
    ['web', { app: 'web', k7: 'v' }],
    ['db', { app: 'db' }],
  ] as const) {
    assert.equal((await api.post(CM, { metadata: { name, labels } })).status, 201)
  }
  return api
}

/** A label selector of `!=` terms that fills `bytes` characters once URL-encoded. */
function labelSelectorOf(bytes: number): string {
  const terms: string[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const term = `k${i}!=v`
    terms.push(term)
    length += encodeURIComponent(term).length + 3
  }
  return terms.join(',')
}

describe('selectors in a URL', { timeout: 120_000 }, () => {
  it("answers a LIST with twenty thousand label terms, while another client's GET is served first", async () => {
    const api = await withConfigMaps()
    const selector = Array.from({ length: 20000 }, (_, i) => `k${i}!=v`).join(',')
    const order: string[] = []
    const list = api.get(`${CM}?labelSelector=${encodeURIComponent(selector)}`).then((r) => (order.push('list'), r))
    // The GET arrives as the next request read from a socket would, once the LIST has started.
    const get = new Promise((resolve) => setTimeout(resolve, 0)).then(() => api.get(`${CM}/db`)).then((r) => (order.push('get'), r))
    const [listed, got] = await Promise.all([list, get])
    assert.equal(got.status, 200, got.text)
    assert.equal(listed.status, 200, listed.text.slice(0, 300))
    assert.deepEqual(
      listed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['db'],
    )
    assert.deepEqual(order, ['get', 'list'], 'the GET waited for the whole selector')
  })

  it('answers field selectors of twenty thousand terms on one field', async () => {
    const api = await withConfigMaps()
    const selector = Array.from({ length: 20000 }, (_, i) => `metadata.name!=n${i}`).join(',')
    const listed = await api.get(`${CM}?fieldSelector=${encodeURIComponent(`${selector},metadata.name!=web`)}`)
    assert.equal(listed.status, 200, listed.text.slice(0, 300))
    assert.deepEqual(
      listed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['db'],
    )
  })

  it('serves a request line just under 1 MiB and refuses one just over with 431, as Go refuses its header bytes', async () => {
    const api = await withConfigMaps()
    const under = await api.get(`${CM}?labelSelector=${encodeURIComponent(labelSelectorOf(MAX_HEADER_BYTES - 4096))}`)
    assert.equal(under.status, 200, under.text.slice(0, 300))
    const over = await api.get(`${CM}?labelSelector=${encodeURIComponent(labelSelectorOf(MAX_HEADER_BYTES + 16))}`)
    assert.equal(over.status, 431, over.text.slice(0, 300))
    assert.equal(over.body.kind, 'Status')
    assert.equal(over.body.code, 431)
    assert.match(over.body.message, /^Request Header Fields Too Large: the request line and headers take \d+ bytes, more than 1048576$/)
    const big = { 'x-padding': 'p'.repeat(MAX_HEADER_BYTES) }
    assert.equal((await api.get(`${CM}/db`, { headers: big })).status, 431)
  })
})
