/**
 * The impersonation filter inside the real filter chain, with an authorizer
 * that allows exactly one list of impersonations: each kind of thing asked
 * for is checked on its own, and the headers never reach the handler.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { UnionAuthenticator } from '../../../core/authn/authenticator.js'
import { bearerTokenAuthenticator, staticTokenAuthenticator } from '../../../core/authn/bearer-token.js'
import { type Attributes, type Authorizer, privilegedGroup, UnionAuthorizer } from '../../../core/authz/authorizer.js'
import { buildChain } from '../../../core/http/chain.js'
import { silentLogger } from '../../../core/logging/logger.js'
import { ServerLifecycle } from '../../../core/lifecycle/lifecycle.js'
import { Metrics } from '../../../core/metrics/metrics.js'

/** The proxy user may read /echo and impersonate the `resource[/subresource]:name` listed; everything else is denied. */
function impersonationPolicy(allowed: readonly string[]): Authorizer {
  const key = (a: Attributes) => `${a.subresource ? `${a.resource}/${a.subresource}` : a.resource}:${a.name}`
  const allows = (a: Attributes) =>
    a.user.username === 'proxy' && (a.verb === 'impersonate' ? allowed.includes(key(a)) : !a.isResourceRequest && a.path === '/echo')
  return {
    authorize: async (a) =>
      allows(a) ? { decision: 'allow', reason: '' } : { decision: 'deny', reason: a.verb === 'impersonate' ? 'not in the impersonation policy' : '' },
  }
}

function chain(allowed: readonly string[]) {
  const tokens = staticTokenAuthenticator([{ token: 'proxy-token', user: { username: 'proxy', groups: [] } }])
  const app = buildChain({
    logger: silentLogger,
    authenticator: new UnionAuthenticator([bearerTokenAuthenticator(tokens)]),
    // system:masters may do anything, so the handler below is reached by an impersonated admin.
    authorizer: new UnionAuthorizer([privilegedGroup, impersonationPolicy(allowed)]),
    embeddedIdentity: null,
    requestTimeoutMs: 10_000,
    lifecycle: new ServerLifecycle(),
    metrics: new Metrics(),
    serving: {},
  })
  app.get('/echo', (c) =>
    c.json({ user: c.get('user'), impersonateHeaders: [...c.req.raw.headers.keys()].filter((h) => h.startsWith('impersonate-')) }),
  )
  return async (headers: Record<string, string>) => {
    const res = await app.fetch(new Request('http://in-process/echo', { headers: { authorization: 'Bearer proxy-token', ...headers } }), {
      connection: {},
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
}

const ADMIN = { 'impersonate-user': 'admin', 'impersonate-group': 'system:masters' }

describe('impersonation filter', () => {
  it('passes the impersonated user on and removes every Impersonate- header', async () => {
    const call = chain(['users:admin', 'groups:system:masters', 'uids:42', 'userextras/scopes:all'])
    const r = await call({ ...ADMIN, 'impersonate-uid': '42', 'impersonate-extra-scopes': 'all' })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.deepEqual(r.body, {
      user: { username: 'admin', groups: ['system:masters', 'system:authenticated'], uid: '42', extra: { scopes: ['all'] } },
      impersonateHeaders: [],
    })
  })

  it('refuses a group the user may not take, naming it, even when the user itself may be impersonated', async () => {
    const call = chain(['users:admin'])
    const r = await call(ADMIN)
    assert.equal(r.status, 403)
    assert.equal(
      r.body['message'],
      'groups "system:masters" is forbidden: User "proxy" cannot impersonate resource "groups" in API group "" at the cluster scope: not in the impersonation policy',
    )
    assert.deepEqual(r.body['details'], { name: 'system:masters', kind: 'groups' })
  })

  it('refuses an extra the user may not set, as userextras/<key> in authentication.k8s.io', async () => {
    const call = chain(['users:admin', 'groups:system:masters'])
    const r = await call({ ...ADMIN, 'impersonate-extra-scopes': 'all' })
    assert.equal(r.status, 403)
    assert.equal(
      r.body['message'],
      'userextras.authentication.k8s.io "all" is forbidden: User "proxy" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope: not in the impersonation policy',
    )
    assert.deepEqual(r.body['details'], { name: 'all', group: 'authentication.k8s.io', kind: 'userextras' })
  })

  it('refuses a uid the user may not claim', async () => {
    const call = chain(['users:admin', 'groups:system:masters'])
    const r = await call({ ...ADMIN, 'impersonate-uid': '0' })
    assert.equal(r.status, 403)
    assert.match(String(r.body['message']), /^uids\.authentication\.k8s\.io "0" is forbidden: User "proxy" cannot impersonate resource "uids"/)
  })

  it('leaves a request without Impersonate- headers as it was authenticated', async () => {
    const call = chain([])
    const r = await call({})
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.deepEqual(r.body, { user: { username: 'proxy', groups: ['system:authenticated'] }, impersonateHeaders: [] })
  })
})
