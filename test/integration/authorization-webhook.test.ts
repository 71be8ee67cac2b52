/**
 * The Webhook authorizer against a real HTTPS webhook on loopback: the
 * review it sends (v1beta1 and v1, client certificate presented), allow /
 * deny / no opinion, answers cached per user and per TTL, match
 * conditions, both failure policies, and a chain replaced at run time.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { AuthorizerSpec } from '../../core/authz/authorizer-specs.js'
import { configuredAuthorizerSpecs } from '../../core/authz/authorizer-specs.js'
import type { WebhookConnection } from '../../core/authz/webhook.js'
import { loadAuthorizationConfiguration } from '../../core/config/authorization.js'
import { type ApiServerOptions, createApiServer } from '../../core/index.js'
import type { Logger } from '../../core/logging/logger.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { TestClient } from './harness.js'
import { type SarWebhook, startSarWebhook } from './sar-webhook.js'

const users = ['alice', 'bob', 'carol', 'broken', 'garbage']
const tokens = users.map((name) => ({ token: `${name}-token`, user: { username: name, groups: ['staff'] } }))
const as = (name: string) => ({ connection: {}, headers: { authorization: `Bearer ${name}-token` } })
const LIST = '/api/v1/namespaces/default/configmaps'

describe('Webhook authorizer', () => {
  let hook: SarWebhook
  let client: NodeWebhookClient
  let connection: WebhookConnection
  let clock = Date.parse('2025-01-01T00:00:00Z')
  const logged: string[] = []
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (fields, message) => void logged.push(`${message} ${JSON.stringify(fields)}`) }

  before(async () => {
    hook = await startSarWebhook((review) => {
      switch (review.body.spec['user']) {
        case 'alice':
          return { allowed: true }
        case 'bob':
          return { denied: true, reason: 'bob is on leave' }
        case 'broken':
          return { raw: { status: 500, text: 'policy engine down' } }
        case 'garbage':
          return { raw: { status: 200, text: '{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":"yes"}}' } }
        default:
          return { reason: 'not my call' }
      }
    })
    client = nodeWebhookClient()
    connection = { url: hook.url, certificateAuthority: hook.ca.certificate, clientCertificate: hook.client.certificate, clientKey: hook.client.privateKey }
  })
  after(async () => {
    client.close()
    await hook.close()
  })

  async function serve(options: ApiServerOptions): Promise<TestClient> {
    const server = createApiServer({ authentication: { tokens }, ...options }, { webhookClient: client, logger, now: () => new Date(clock) })
    await server.ready
    return new TestClient(server)
  }
  const legacy = (extra: Partial<NonNullable<ApiServerOptions['authorizationWebhook']>> = {}) => ({ connection, ...extra })

  it('asks with a v1beta1 SubjectAccessReview over HTTPS, presenting its client certificate, and allows what the webhook allows', async () => {
    const api = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy() })
    hook.received.length = 0
    const reply = await api.get(LIST, as('alice'))
    assert.equal(reply.status, 200, reply.text)
    assert.equal(hook.received.length, 1)
    const [review] = hook.received
    assert.equal(review!.clientCommonName, 'kube-apiserver')
    assert.equal(review!.path, '/authorize')
    assert.deepEqual(review!.body, {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1beta1',
      metadata: { creationTimestamp: null },
      spec: {
        resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'configmaps' },
        user: 'alice',
        group: ['staff', 'system:authenticated'],
      },
      status: { allowed: false },
    })
  })

  it('sends v1 with `groups` when asked to, and non-resource requests as nonResourceAttributes', async () => {
    const api = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy({ version: 'v1' }) })
    hook.received.length = 0
    assert.equal((await api.get('/version', as('alice'))).status, 200)
    assert.deepEqual(hook.received[0]!.body.spec, { nonResourceAttributes: { path: '/version', verb: 'get' }, user: 'alice', groups: ['staff', 'system:authenticated'] })
    assert.equal(hook.received[0]!.body.apiVersion, 'authorization.k8s.io/v1')
  })

  it('denies with the webhook\'s reason, and later modes are not asked', async () => {
    const api = await serve({ authorizationModes: ['Webhook', 'AlwaysAllow'], authorizationWebhook: legacy() })
    const reply = await api.post(LIST, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, as('bob'))
    assert.equal(reply.status, 403)
    assert.equal(reply.body.message, 'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default": bob is on leave')
    assert.equal((await api.get(`${LIST}/x`, as('alice'))).status, 404)
  })

  it('has no opinion when the webhook neither allows nor denies, so the next mode decides', async () => {
    const alone = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy() })
    const refused = await alone.get(LIST, as('carol'))
    assert.equal(refused.status, 403)
    assert.match(refused.body.message, /: not my call$/)
    const withNext = await serve({ authorizationModes: ['Webhook', 'AlwaysAllow'], authorizationWebhook: legacy() })
    assert.equal((await withNext.get(LIST, as('carol'))).status, 200)
  })

  it('caches answers per user and per attributes, for the TTL of allowed and of other answers', async () => {
    const api = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy({ authorizedTTLMs: 60_000, unauthorizedTTLMs: 10_000 }) })
    hook.received.length = 0
    const asked = () => hook.received.map((r) => `${r.body.spec['user']} ${r.body.spec['resourceAttributes']?.verb}`)
    await api.get(LIST, as('alice'))
    await api.get(LIST, as('alice'))
    assert.deepEqual(asked(), ['alice list'], 'the second identical request is answered from the cache')
    assert.equal((await api.get(LIST, as('bob'))).status, 403, "alice's answer never serves bob")
    await api.get(LIST, as('bob'))
    await api.get('/api/v1/namespaces/default/configmaps/x', as('alice'))
    assert.deepEqual(asked(), ['alice list', 'bob list', 'alice get'])
    clock += 10_001 // past the unauthorized TTL, within the authorized one
    await api.get(LIST, as('alice'))
    await api.get(LIST, as('bob'))
    assert.deepEqual(asked(), ['alice list', 'bob list', 'alice get', 'bob list'])
    clock += 60_000
    await api.get(LIST, as('alice'))
    assert.deepEqual(asked(), ['alice list', 'bob list', 'alice get', 'bob list', 'alice list'])
  })

  it('caches nothing with a TTL of 0', async () => {
    const api = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy({ authorizedTTLMs: 0, unauthorizedTTLMs: 0 }) })
    hook.received.length = 0
    for (const user of ['alice', 'alice', 'bob', 'bob']) await api.get(LIST, as(user))
    assert.equal(hook.received.length, 4)
  })

  it('has no opinion and logs when the call fails or the answer cannot be read (the legacy flags)', async () => {
    const api = await serve({ authorizationModes: ['Webhook'], authorizationWebhook: legacy() })
    logged.length = 0
    const failed = await api.get(LIST, as('broken'))
    assert.equal(failed.status, 403)
    assert.equal(failed.body.message, 'configmaps is forbidden: User "broken" cannot list resource "configmaps" in API group "" in the namespace "default"')
    assert.equal((await api.get(LIST, as('garbage'))).status, 403)
    assert.equal(logged.length, 2)
    assert.match(logged[0]!, /^Failed calling webhook .*status code 500: policy engine down/)
    assert.match(logged[1]!, /^Failed calling webhook .*status.allowed: must be a boolean/)
    const withNext = await serve({ authorizationModes: ['Webhook', 'AlwaysAllow'], authorizationWebhook: legacy() })
    assert.equal((await withNext.get(LIST, as('broken'))).status, 200)
  })

  function configured(failurePolicy: 'Deny' | 'NoOpinion', conditions: string[] = []): AuthorizerSpec[] {
    const yaml = [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AuthorizationConfiguration',
      'authorizers:',
      '- type: Webhook',
      '  name: policy-engine',
      '  webhook:',
      '    timeout: 5s',
      '    subjectAccessReviewVersion: v1',
      '    matchConditionSubjectAccessReviewVersion: v1',
      `    failurePolicy: ${failurePolicy}`,
      '    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /etc/authz/webhook.kubeconfig}',
      `    matchConditions: ${JSON.stringify(conditions.map((expression) => ({ expression })))}`,
      '- type: AlwaysAllow',
      '  name: alwaysallow',
    ].join('\n')
    return configuredAuthorizerSpecs(loadAuthorizationConfiguration(yaml, '/etc/authz/config.yaml'), () => connection)
  }

  it('denies when the call fails under failurePolicy Deny, before any later authorizer', async () => {
    const api = await serve({ authorizationConfiguration: configured('Deny') })
    assert.equal((await api.get(LIST, as('broken'))).status, 403)
    assert.equal((await api.get(LIST, as('garbage'))).status, 403)
    assert.equal((await api.get(LIST, as('alice'))).status, 200)
    const lenient = await serve({ authorizationConfiguration: configured('NoOpinion') })
    assert.equal((await lenient.get(LIST, as('broken'))).status, 200)
  })

  it('asks only when every match condition holds; a condition that fails follows the failure policy', async () => {
    const guarded = ["request.resourceAttributes.namespace == 'guarded'", "request.user != 'nobody'"]
    const api = await serve({ authorizationConfiguration: configured('Deny', guarded) })
    hook.received.length = 0
    assert.equal((await api.get(LIST, as('bob'))).status, 200, 'not in the guarded namespace: the webhook is skipped, AlwaysAllow answers')
    assert.equal(hook.received.length, 0)
    assert.equal((await api.get('/api/v1/namespaces/guarded/configmaps', as('bob'))).status, 403)
    assert.equal(hook.received.length, 1)
    // A non-resource request has no resourceAttributes: the condition fails, and Deny decides.
    logged.length = 0
    assert.equal((await api.get('/version', as('alice'))).status, 403)
    assert.match(logged[0] ?? '', /match conditions/)
    const lenient = await serve({ authorizationConfiguration: configured('NoOpinion', guarded) })
    assert.equal((await lenient.get('/version', as('alice'))).status, 200)
  })

  it('replaces the chain at run time, and keeps it when the new one cannot be built', async () => {
    const server = createApiServer({ authentication: { tokens }, authorizationConfiguration: [{ type: 'AlwaysDeny', name: 'alwaysdeny' }] }, { webhookClient: client })
    await server.ready
    const api = new TestClient(server)
    assert.equal((await api.get(LIST, as('carol'))).status, 403)
    await server.reloadAuthorization(configured('NoOpinion'))
    assert.equal((await api.get(LIST, as('carol'))).status, 200)
    assert.equal((await api.get(LIST, as('bob'))).status, 403)
    await assert.rejects(server.reloadAuthorization([{ type: 'Magic', name: 'magic' }]), /authorization mode "Magic" is not implemented/)
    assert.equal((await api.get(LIST, as('carol'))).status, 200)
    await server.shutdown()
  })
})
