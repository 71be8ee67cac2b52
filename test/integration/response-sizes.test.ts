/**
 * `apiserver_response_sizes` records the exact bytes of each read's answer,
 * whether the answer is JSON (non-ASCII text included), YAML, protobuf or a
 * Status, and an answer of text in hand is sized without being streamed.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer } from '../../core/index.js'
import { STREAMED_LIST_FROM } from '../../core/http/respond.js'
import { utf8Length } from '../../core/machinery/utf8-length.js'
import { knownSize } from '../../core/http/response-size.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'

const CM = '/api/v1/namespaces/default/configmaps'
const admin = { authorization: 'Bearer admin-token' }
const labels = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver', verb: 'GET', scope: 'resource' }

describe('apiserver_response_sizes', () => {
  let server: ApiServer
  const call = (path: string, init: RequestInit = {}) =>
    server.fetch(new Request(`http://in-process${path}`, { ...init, headers: { ...admin, ...(init.headers as Record<string, string>) } }))
  /** The GET's answer in bytes, and the size sum the metrics moved by for it. */
  const measuredGet = async (path: string, accept: string): Promise<{ bytes: number; recorded: number; status: number }> => {
    const sum = async () => sampleValue(parsePrometheusText(await (await call('/metrics')).text()), 'apiserver_response_sizes_sum', labels) ?? 0
    const before = await sum()
    const res = await call(path, { headers: { accept } })
    const bytes = (await res.arrayBuffer()).byteLength
    return { bytes, recorded: (await sum()) - before, status: res.status }
  }

  before(async () => {
    server = createApiServer({ authentication: { tokens: [{ token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } }] } })
    await server.ready
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'words' }, data: { greeting: 'grüß dich, 世界 👋' } })
    const res = await call(CM, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    assert.equal(res.status, 201, await res.text())
  })
  after(() => server.shutdown())

  for (const accept of ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']) {
    it(`records the exact size of a GET answered as ${accept}`, async () => {
      const { bytes, recorded, status } = await measuredGet(`${CM}/words`, accept)
      assert.equal(status, 200)
      assert.equal(recorded, bytes)
    })
  }

  it('records the exact size of a 404 Status', async () => {
    const { bytes, recorded, status } = await measuredGet(`${CM}/missing`, 'application/json')
    assert.equal(status, 404)
    assert.equal(recorded, bytes)
  })

  // An answer of text in hand that lost its size would be watched through stream stages by every filter that waits
  // for it to be sent (some 0.5 ms of CPU a request for /version): the answer the chain hands out keeps it.
  for (const [path, headers] of [
    ['/version', {}],
    ['/openapi/v2', { accept: 'application/json' }],
    ['/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' }],
    ['/openapi/v3/api/v1', {}],
    ['/metrics', {}],
    [`${CM}/words`, { 'user-agent': 'curl/8.5.0' }],
    [`${CM}/words?pretty=true`, {}],
  ] as const) {
    it(`answers ${path} ${JSON.stringify(headers)} from text in hand, its size known`, async () => {
      const res = await call(path, { headers })
      assert.equal(res.status, 200)
      const size = knownSize(res)
      assert.equal(size, (await res.arrayBuffer()).byteLength)
    })
  }

  it('records the exact size of a long LIST, whose answer is streamed in pieces', async () => {
    for (let i = 0; i <= STREAMED_LIST_FROM; i++) {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `many-${i}` }, data: { i: `${i} ünïcode` } })
      assert.equal((await call(CM, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status, 201)
    }
    const listLabels = { ...labels, verb: 'LIST', scope: 'namespace' }
    const sum = async () => sampleValue(parsePrometheusText(await (await call('/metrics')).text()), 'apiserver_response_sizes_sum', listLabels) ?? 0
    for (const path of [CM, `${CM}?resourceVersion=0`]) {
      const before = await sum()
      const res = await call(path)
      assert.equal(res.status, 200)
      const bytes = new Uint8Array(await res.arrayBuffer())
      const list = JSON.parse(new TextDecoder().decode(bytes)) as { items: unknown[] }
      assert.equal(list.items.length, STREAMED_LIST_FROM + 2)
      assert.equal((await sum()) - before, bytes.byteLength, path)
    }
  })
})

describe('utf8Length', () => {
  it('counts as TextEncoder writes, lone surrogates as U+FFFD', () => {
    for (const text of ['', 'plain', 'grüß', '世界', '👋', 'a\uD800b', '\uDC00', 'x\uD83D', '\uD83D\uDC4B\uD83D']) {
      assert.equal(utf8Length(text), new TextEncoder().encode(text).byteLength, JSON.stringify(text))
    }
  })
})
