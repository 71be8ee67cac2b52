/**
 * Dot segments and malformed escapes on the Node listener. A Web Request's
 * URL resolves `..` and its escaped forms, so
 * `/api/v1/namespaces/team-a/%2e%2e/team-b/...` had reached team-b's
 * objects, where upstream keeps every segment as sent and a front proxy
 * judging the path saw team-a. Such a path is refused with 400 before it
 * becomes a Request, on the upgrade path too; dots inside a segment or in
 * the query are left alone. A path with a malformed escape (`%zz`) gets
 * Go's own plain 400 before any handler, as Go's server cannot parse it.
 */
import assert from 'node:assert/strict'
import { connect as http2Connect } from 'node:http2'
import { after, before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { sendRaw as raw, serveOnLoopback } from './node-listener.js'
import { createTestServer, TestClient } from './harness.js'

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer admin-token\r\nConnection: close\r\n${extra}\r\n`

describe('dot segments in a request path on the Node listener', () => {
  let server: ApiServer
  let listener: TlsListener

  before(async () => {
    server = createTestServer({ authentication: { tokens: [{ token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } }] } })
    await server.ready
    const client = new TestClient(server)
    for (const namespace of ['team-a', 'team-b']) {
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: namespace } })).status, 201)
      const created = await client.post(`/api/v1/namespaces/${namespace}/secrets`, { metadata: { name: 's' }, stringData: { owner: namespace } })
      assert.equal(created.status, 201, created.text)
    }
    listener = await serveOnLoopback(server)
  })
  after(async () => {
    await listener?.close()
    await server?.shutdown()
  })

  it("refuses a path that climbs out of one namespace into another with 400, and serves nothing of the other's", async () => {
    for (const path of [
      '/api/v1/namespaces/team-a/%2e%2e/team-b/secrets/s',
      '/api/v1/namespaces/team-a/%2E%2e/team-b/secrets/s',
      '/api/v1/namespaces/team-a/.%2e/team-b/secrets/s',
      '/api/v1/namespaces/team-a/../team-b/secrets/s',
      '/api/v1/namespaces/team-b/./secrets/s',
      '/api/v1/namespaces/team-b/secrets/s/%2e',
    ]) {
      const answer = await raw(listener.port, get(path))
      assert.equal(answer.status, 400, `${path}: ${answer.text}`)
      assert.match(answer.text, /"reason":"BadRequest"/)
      assert.match(answer.text, /the request path may not contain the segment '(\.|\.\.|%2e%2e|%2E%2e|\.%2e|%2e)'/)
      assert.doesNotMatch(answer.text, /owner/, 'no Secret is served')
    }
  })

  it("refuses a path with a backslash, which a URL reads as a slash, with 400, on the upgrade path and over HTTP/2 too, serving nothing of the other namespace's", async () => {
    const climb = '/api/v1/namespaces/team-a/..\\..\\namespaces/team-b/secrets/s'
    const upgrade = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
    for (const path of [climb, '/api/v1/namespaces/team-b\\secrets/s', '/version\\']) {
      for (const extra of ['', upgrade]) {
        const answer = await raw(listener.port, get(path, extra))
        assert.equal(answer.status, 400, `${path}: ${answer.text}`)
        assert.match(answer.text, /"message":"Backslash in request path"/)
        assert.doesNotMatch(answer.text, /owner/, 'no Secret is served')
      }
    }
    const session = http2Connect(`https://127.0.0.1:${listener.port}`, { rejectUnauthorized: false })
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': climb, authorization: 'Bearer admin-token' }, { endStream: true })
        stream.once('response', (headers) => {
          stream.resume()
          resolve(Number(headers[':status']))
        })
        stream.once('error', reject)
      })
      assert.equal(status, 400)
    } finally {
      session.close()
    }
    // Escaped, it is a character of a segment as upstream keeps it, and names no namespace.
    assert.equal((await raw(listener.port, get('/api/v1/namespaces/team-a/..%5C..%5Cnamespaces/team-b/secrets/s'))).status, 404)
  })

  it('refuses an upgrade request with such a path too', async () => {
    const answer = await raw(listener.port, get('/api/v1/namespaces/team-a/%2e%2e/team-b/secrets?watch=true', 'Upgrade: websocket\r\nConnection: Upgrade\r\n'))
    assert.equal(answer.status, 400, answer.text)
    assert.match(answer.text, /may not contain the segment '%2e%2e'/)
  })

  it("answers a path with a malformed escape as Go's server does: a plain 400 before any handler, the connection closed", async () => {
    for (const path of ['/api/v1/namespaces/team-a/secrets/s%zz', '/api/v1/namespaces/team-a/secrets/%', '/api/v1/namespaces/%2', '/healthz%G0']) {
      // With the administrator's token and without one: no handler (authentication, audit) sees the request.
      for (const head of [get(path), `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`]) {
        const answer = await raw(listener.port, head)
        assert.equal(answer.status, 400, `${path}: ${answer.text}`)
        assert.match(answer.text, /\r\ncontent-type: text\/plain; charset=utf-8\r\n/i)
        assert.match(answer.text, /\r\nconnection: close\r\n/i)
        assert.doesNotMatch(answer.text, /audit-id|x-kubernetes-pf/i, 'no handler saw it')
        assert.ok(answer.text.endsWith('\r\n\r\n400 Bad Request'), answer.text)
      }
    }
    const upgrade = await raw(listener.port, get('/api/v1/namespaces/team-a/pods/p%zz/exec', 'Upgrade: websocket\r\nConnection: Upgrade\r\n'))
    assert.equal(upgrade.status, 400, upgrade.text)
    assert.ok(upgrade.text.endsWith('400 Bad Request'), upgrade.text)
    // A well-formed escape is decoded as ever, and a malformed one in the query is the handler's to read.
    assert.equal((await raw(listener.port, get('/api/v1/namespaces/team-a/secrets/%73'))).status, 200)
    const query = await raw(listener.port, get('/api/v1/namespaces/team-a/secrets?limit=%zz'))
    assert.match(query.text, /audit-id/i)
  })

  it('serves dots inside a segment and in the query as ever', async () => {
    const secret = await raw(listener.port, get('/api/v1/namespaces/team-a/secrets/s?labelSelector=a.b/c&x=/../'))
    assert.equal(secret.status, 200, secret.text)
    const discovery = await raw(listener.port, get('/apis/rbac.authorization.k8s.io/v1'))
    assert.equal(discovery.status, 200, discovery.text)
  })
})
