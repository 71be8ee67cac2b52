/**
 * Warning headers over the Node listener, whatever text a client puts in
 * them: a field name with a DEL or another control character in it (which
 * `fieldValidation=Warn` names in a warning) had made Node refuse the
 * answer's headers, so a create that was stored answered 500 and the
 * keep-alive connection after it hung up. The warning now goes out, the
 * answer is the 201 of what was stored, and the connection serves on.
 */
import assert from 'node:assert/strict'
import { Agent, request } from 'node:https'
import { after, before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/server.js'
import type { TlsListener } from '../../runtimes/node/adapter/serve.js'
import { serveOnLoopback } from './node-listener.js'
import { createTestServer } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

describe('Warning headers on the Node listener', () => {
  let server: ApiServer
  let listener: TlsListener
  // One connection for every request: a broken answer would break the ones after it.
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })

  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; warnings: string[]; text: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: listener.port, path, method, agent, headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' } },
        (res) => {
          let text = ''
          res.setEncoding('latin1')
          res.on('data', (d: string) => (text += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, warnings: res.rawHeaders.filter((_, i, all) => all[i - 1]?.toLowerCase() === 'warning'), text }))
        },
      )
      req.once('error', reject)
      req.end(body)
    })

  before(async () => {
    server = createTestServer({ authentication: { tokens: [{ token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } }] } })
    await server.ready
    listener = await serveOnLoopback(server)
  })
  after(async () => {
    agent.destroy()
    await listener?.close()
    await server?.shutdown()
  })

  it('answers the create it stored with its warning, a field named with control characters and all, and serves on', async () => {
    const fields = ['del\x7fhere', 'bell\x07', 'esc\x1b[31m', 'cr\rlf\n']
    for (const [i, field] of fields.entries()) {
      const created = await send('POST', `${CM}?fieldValidation=Warn`, `{"metadata":{"name":"w${i}"},${JSON.stringify(field)}:1}`)
      assert.equal(created.status, 201, created.text)
      assert.equal(created.warnings.length, 1, JSON.stringify(created.warnings))
      assert.match(created.warnings[0]!, /^299 - "unknown field \\"[^"]+\\""$/)
      assert.doesNotMatch(created.warnings[0]!, /[\x00-\x08\x0a-\x1f\x7f]/)
      const read = await send('GET', `${CM}/w${i}`)
      assert.equal(read.status, 200, read.text)
    }
  })
})
