/**
 * The authentication filter inside the real filter chain: once the caller
 * is known, its credential is gone from the request the handlers see.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { UnionAuthenticator } from '../../../core/authn/authenticator.js'
import { bearerTokenAuthenticator, staticTokenAuthenticator } from '../../../core/authn/bearer-token.js'
import { privilegedGroup, UnionAuthorizer } from '../../../core/authz/authorizer.js'
import { buildChain } from '../../../core/http/chain.js'
import { ServerLifecycle } from '../../../core/lifecycle/lifecycle.js'
import { Metrics } from '../../../core/metrics/metrics.js'
import { silentLogger } from '../../../core/logging/logger.js'

function echoServer() {
  const tokens = staticTokenAuthenticator([{ token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } }])
  const app = buildChain({
    logger: silentLogger,
    authenticator: new UnionAuthenticator([bearerTokenAuthenticator(tokens)]),
    authorizer: new UnionAuthorizer([privilegedGroup]),
    embeddedIdentity: { username: 'embedder', groups: ['system:masters'] },
    requestTimeoutMs: 10_000,
    lifecycle: new ServerLifecycle(),
    metrics: new Metrics(),
    serving: {},
  })
  app.get('/echo', (c) => c.json({ user: c.get('user').username, authorization: c.req.raw.headers.get('authorization'), other: c.req.header('x-other') ?? null }))
  return async (headers: Record<string, string>, viaTransport = true) => {
    const res = await app.fetch(new Request('http://in-process/echo', { headers }), viaTransport ? { connection: {} } : undefined)
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
}

describe('the Authorization header after authentication', () => {
  it('is removed before the handler runs, and the other headers stay', async () => {
    const r = await echoServer()({ authorization: 'Bearer admin-token', 'x-other': 'kept' })
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, { user: 'admin', authorization: null, other: 'kept' })
  })

  it('is removed from an in-process request that brought its own credential', async () => {
    const r = await echoServer()({ authorization: 'Bearer admin-token' }, false)
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, { user: 'admin', authorization: null, other: null })
  })

  it('never reaches a handler when it does not authenticate: the answer is a 401 Status', async () => {
    const r = await echoServer()({ authorization: 'Bearer wrong' })
    assert.equal(r.status, 401)
    assert.equal(r.body['reason'], 'Unauthorized')
  })
})
