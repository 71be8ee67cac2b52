/**
 * A path holding a `%` not followed by two hex digits is a request line Go's
 * server cannot parse: upstream answers every verb on every such path with
 * a bare `400 Bad Request` in plain text and closes the connection, before
 * authentication. Here such a namespace segment had listed the empty
 * namespace `%zz`, and a name segment had been judged as a name.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import type { ConnectionInfo } from '../../core/index.js'
import { startServer, type TestClient } from './harness.js'

const PATHS = [
  '/api/v1/namespaces/%zz/configmaps',
  '/api/v1/namespaces/%zz/configmaps/x',
  '/api/v1/namespaces/%2/configmaps',
  '/api/v1/namespaces/default/configmaps/%zz',
  '/api/v1/namespaces/default/configmaps/a%2',
  '/api/v1/namespaces/default/configmaps/%',
  '/api/v1/namespaces/%zz',
  '/apis/apps/v1/namespaces/%zz/deployments/x/scale',
  '/apis/%zz/v1',
  '/healthz%zz',
]

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } }

describe('a path with a malformed escape', () => {
  let api: TestClient
  before(async () => {
    api = await startServer({ authentication: { tokens: [{ token: 't', user: { username: 'alice', uid: '1', groups: [] } }] } })
  })

  const assertBadRequestLine = (res: { status: number; text: string; headers: Headers }, what: string) => {
    assert.equal(res.status, 400, what)
    assert.equal(res.text, '400 Bad Request', what)
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8', what)
    assert.equal(res.headers.get('connection'), 'close', what)
  }

  it('answers every verb with upstream’s bare 400, and stores nothing', async () => {
    for (const path of PATHS) {
      for (const [method, body] of [
        ['GET', undefined],
        ['POST', configMap],
        ['PUT', configMap],
        ['DELETE', undefined],
      ] as const) {
        assertBadRequestLine(await api.call(method, path, body === undefined ? {} : { body }), `${method} ${path}`)
      }
      assertBadRequestLine(await api.patch(path, { data: { a: '2' } }, 'application/merge-patch+json'), `PATCH ${path}`)
      assertBadRequestLine(await api.get(`${path}?watch=1`), `watch ${path}`)
    }
    const listed = await api.get('/api/v1/configmaps?fieldSelector=metadata.name%3Dx')
    assert.equal(listed.status, 200)
    assert.deepEqual(listed.body.items, [], 'no ConfigMap was written anywhere')
    const namespaces = (await api.get('/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name)
    assert.ok(!namespaces.some((n: string) => n.includes('%')), namespaces.join(','))
  })

  it('answers before authentication: a caller without a credential gets the same 400, not 401', async () => {
    const network: ConnectionInfo = {}
    assertBadRequestLine(await api.get('/api/v1/namespaces/%zz/configmaps', { connection: network }), 'anonymous')
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps', { connection: network })).status, 401, 'a well-formed path still needs a credential')
  })

  it('quotes a name an escape spells in a 404 as Go quotes it', async () => {
    const cases: [string, string][] = [
      ['%00', 'configmaps "\\x00" not found'],
      ['a%22b', 'configmaps "a\\"b" not found'],
      ['a%5Cb', 'configmaps "a\\\\b" not found'],
    ]
    for (const [segment, message] of cases) {
      const res = await api.get(`/api/v1/namespaces/default/configmaps/${segment}`)
      assert.equal(res.status, 404, segment)
      assert.equal(res.body.message, message)
    }
  })

  it('serves well-formed escapes as before', async () => {
    assert.equal((await api.post('/api/v1/namespaces/default/configmaps', configMap)).status, 201)
    assert.equal((await api.get('/api/v1/namespaces/default/configmaps/%78')).body.metadata.name, 'x', '%78 is x')
  })
})
