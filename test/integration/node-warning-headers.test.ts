/**
 * Warning headers over the Node listener, whatever text a client puts in
 * them: a field name with a DEL or another control character in it (which
 * `fieldValidation=Warn` names in a warning) had made Node refuse the
 * answer's headers, so a create that was stored answered 500 and the
 * keep-alive connection after it hung up. The warning now goes out, the
 * answer is the 201 of what was stored, and the connection serves on. Any
 * other header value Node would refuse goes out with those characters as
 * spaces, whatever handler made it: the listener checks every answer.
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

describe('header values Node would refuse, from any handler', () => {
  it("answers the handler's status and body with those characters as spaces, and serves on", async () => {
    // A handler of its own: the listener's check holds for whatever answers, not for one header of core's.
    const listener = await serveOnLoopback({
      fetch: async (request) =>
        new URL(request.url).pathname === '/odd'
          ? new Response('done', { status: 201, headers: { 'x-odd': 'a\x7fb\x01c\td', 'content-type': 'text/plain' } })
          : new Response('plain', { status: 200 }),
    })
    const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
    const get = (path: string) =>
      new Promise<{ status: number; odd: string | undefined; text: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: listener.port, path, agent }, (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (d: string) => (text += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, odd: res.headers['x-odd'] as string | undefined, text }))
        })
        req.once('error', reject)
        req.end()
      })
    try {
      const odd = await get('/odd')
      assert.deepEqual(odd, { status: 201, odd: 'a b c\td', text: 'done' })
      assert.deepEqual(await get('/next'), { status: 200, odd: undefined, text: 'plain' }, 'the connection serves on')
    } finally {
      agent.destroy()
      await listener.close()
    }
  })
})
