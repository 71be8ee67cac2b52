/**
 * TokenRequest through admission: `serviceaccounts/<name>/token` is a
 * CREATE of subresource `token` with the TokenRequest as the object, so
 * NodeRestriction's token rules, ValidatingAdmissionPolicies and webhooks
 * see it before anything is signed. Every refusal carries no token.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, answer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, startServer, TestClient } from './harness.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const WAIT_MS = 60_000
const NS = '/api/v1/namespaces/default'
const tokens = [
  { token: 'n1-token', user: { username: 'system:node:n1', groups: ['system:nodes'] } },
  { token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } },
]
const kubelet = { connection: {}, headers: { authorization: 'Bearer n1-token' } }

const tokenRequest = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec })
/** The projected token volume a pod gets for the API server's own audience. */
const apiToken = { name: 'api', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }
const podRef = (pod: { metadata: { name: string; uid: string } }) => ({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid })

async function created(api: TestClient, path: string, body: unknown): Promise<any> {
  const reply = await api.post(path, body)
  assert.equal(reply.status, 201, reply.text)
  return reply.body
}

function assertRefused(reply: { status: number; body: any }, status: number, message: string): void {
  assert.equal(reply.status, status, JSON.stringify(reply.body))
  assert.equal(reply.body.kind, 'Status')
  assert.equal(reply.body.message, message)
  assert.equal(reply.body.status, 'Failure')
}

describe("NodeRestriction's token rules", () => {
  let api: TestClient
  const pods: Record<string, any> = {}

  before(async () => {
    api = await startServer({ authentication: { tokens }, authorizationModes: ['AlwaysAllow'], admission: { plugins: ['NodeRestriction'] } })
    for (const name of ['robot', 'other']) await created(api, `${NS}/serviceaccounts`, { metadata: { name } })
    for (const name of ['n1', 'n2']) await created(api, '/api/v1/nodes', { metadata: { name } })
    for (const [name, nodeName] of [
      ['on-n1', 'n1'],
      ['on-n2', 'n2'],
    ] as const)
      pods[name] = await created(api, `${NS}/pods`, { metadata: { name }, spec: { nodeName, serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] } })
    await created(api, `${NS}/secrets`, { metadata: { name: 'bound' } })
  })

  const ask = (sa: string, spec: Record<string, unknown>) => api.post(`${NS}/serviceaccounts/${sa}/token`, tokenRequest(spec), kubelet)

  it('refuses a token with no bound object, whatever its audience and expiry, with 403 and no token', async () => {
    const reply = await ask('robot', { audiences: ['anything'], expirationSeconds: 4000000000 })
    assertRefused(reply, 403, 'serviceaccounts "robot" is forbidden: node requested token not bound to a pod')
    assert.equal(reply.body.status?.token, undefined)
  })

  it('refuses a token bound to a secret, as not bound to a pod', async () => {
    const secret = (await api.get(`${NS}/secrets/bound`)).body
    const reply = await ask('robot', { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'bound', uid: secret.metadata.uid } })
    assertRefused(reply, 403, 'serviceaccounts "robot" is forbidden: node requested token not bound to a pod')
  })

  it("refuses a token bound to another node's pod", async () => {
    const reply = await ask('robot', { boundObjectRef: podRef(pods['on-n2']) })
    assertRefused(reply, 403, 'serviceaccounts "robot" is forbidden: node requested token bound to a pod scheduled on a different node')
  })

  it('refuses a pod binding without a uid, or with the uid of another pod', async () => {
    const { uid: _uid, ...noUid } = podRef(pods['on-n1'])
    assertRefused(await ask('robot', { boundObjectRef: noUid }), 403, 'serviceaccounts "robot" is forbidden: node requested token with a pod binding without a uid')
    const stale = { ...podRef(pods['on-n1']), uid: pods['on-n2'].metadata.uid }
    assertRefused(
      await ask('robot', { boundObjectRef: stale }),
      403,
      `serviceaccounts "robot" is forbidden: the UID in the bound object reference (${stale.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    )
  })

  it('refuses a token for a service account its own pod does not run as, with 400', async () => {
    const reply = await ask('other', { boundObjectRef: podRef(pods['on-n1']) })
    assertRefused(reply, 400, 'cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.')
  })

  it('refuses the unbound token under the Node and RBAC authorizers too, which let the node ask', async () => {
    const secured = await startServer({ authentication: { tokens }, authorizationModes: ['Node', 'RBAC'], admission: { plugins: ['NodeRestriction'] } })
    const admin = { connection: {}, headers: { authorization: 'Bearer admin-token' } }
    for (const [path, body] of [
      [`${NS}/serviceaccounts`, { metadata: { name: 'robot' } }],
      ['/api/v1/nodes', { metadata: { name: 'n1' } }],
      [`${NS}/pods`, { metadata: { name: 'on-n1' }, spec: { nodeName: 'n1', serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }], volumes: [apiToken] } }],
    ] as const)
      assert.equal((await secured.post(path, body, admin)).status, 201)
    const path = `${NS}/serviceaccounts/robot/token`
    const pod = (await secured.get(`${NS}/pods/on-n1`, admin)).body
    // The authorizer lets the node ask once it knows the pod: a bound request is issued.
    await eventually('the node authorizer knows the pod', async () => (await secured.post(path, tokenRequest({ boundObjectRef: podRef(pod) }), kubelet)).status === 201, WAIT_MS)
    const reply = await secured.post(path, tokenRequest({ audiences: ['anything'], expirationSeconds: 4000000000 }), kubelet)
    assertRefused(reply, 403, 'serviceaccounts "robot" is forbidden: node requested token not bound to a pod')
    assert.equal(reply.body.status?.token, undefined)
    // ServiceAccountNodeAudienceRestriction is off at 1.32: a bound token may name any audience.
    assert.equal((await secured.post(path, tokenRequest({ audiences: ['anything'], boundObjectRef: podRef(pod) }), kubelet)).status, 201)
  })

  it('issues a token bound to a pod on the node, for its service account', async () => {
    const reply = await ask('robot', { boundObjectRef: podRef(pods['on-n1']) })
    assert.equal(reply.status, 201, reply.text)
    assert.ok(reply.body.status.token)
  })
})

describe('TokenRequest and admission policies and webhooks', () => {
  let webhook: AdmissionWebhookServer
  let webhookClient: NodeWebhookClient
  let api: TestClient

  before(async () => {
    webhook = await startAdmissionWebhook()
    webhookClient = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['ValidatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] } }, { webhookClient })
    await server.ready
    api = new TestClient(server)
    for (const name of ['robot', 'sealed', 'short']) await created(api, `${NS}/serviceaccounts`, { metadata: { name } })
  })
  after(async () => {
    webhookClient?.close()
    await webhook?.close()
  })

  it('refuses a TokenRequest a deny-all ValidatingAdmissionPolicy covers, with 422 and no token', async () => {
    await created(api, `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'deny-all' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*/*'] }] },
        matchConditions: [{ name: 'sealed-only', expression: "request.name == 'sealed'" }],
        validations: [{ expression: 'false' }],
      },
    })
    await created(api, `${ADM}/validatingadmissionpolicybindings`, { metadata: { name: 'deny-all-binding' }, spec: { policyName: 'deny-all', validationActions: ['Deny'] } })
    const path = `${NS}/serviceaccounts/sealed/token`
    await eventually('the policy refuses', async () => (await api.post(path, tokenRequest())).status === 422, WAIT_MS)
    const reply = await api.post(path, tokenRequest({ audiences: ['anything'] }))
    assertRefused(
      reply,
      422,
      "serviceaccounts \"sealed\" is forbidden: ValidatingAdmissionPolicy 'deny-all' with binding 'deny-all-binding' denied request: failed expression: false",
    )
    assert.equal(reply.body.reason, 'Invalid')
    assert.equal(reply.body.status?.token, undefined)
  })

  it('sends webhooks the TokenRequest as upstream does, with dryRun, and a refusal issues no token', async () => {
    const hookPath = '/tokens'
    webhook.handlers.set(hookPath, (r) =>
      answer(r, r.body.request['dryRun'] ? {} : { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'tokens are issued by the vault' } }),
    )
    await created(api, `${ADM}/validatingwebhookconfigurations`, {
      metadata: { name: 'tokens' },
      webhooks: [
        {
          name: 'tokens.example.com',
          clientConfig: { url: webhook.base + hookPath, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['serviceaccounts/token'] }],
          matchConditions: [{ name: 'robot-only', expression: "request.name == 'robot'" }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    })
    const path = `${NS}/serviceaccounts/robot/token`
    await eventually('the webhook refuses', async () => (await api.post(path, tokenRequest())).status === 403, WAIT_MS)
    const before = webhook.received.length
    const reply = await api.post(path, tokenRequest({ expirationSeconds: 7200 }))
    assertRefused(reply, 403, 'admission webhook "tokens.example.com" denied the request: tokens are issued by the vault')
    assert.equal(reply.body.status?.token, undefined)
    const review = webhook.received.slice(before).find((r) => r.path === hookPath)?.body.request
    assert.ok(review, 'the webhook was not called')
    assert.equal(review.operation, 'CREATE')
    assert.deepEqual(review.kind, { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' })
    assert.deepEqual(review.resource, { group: '', version: 'v1', resource: 'serviceaccounts' })
    assert.equal(review.subResource, 'token')
    assert.equal(review.name, 'robot')
    assert.equal(review.namespace, 'default')
    assert.equal(review.dryRun, false)
    assert.equal(review.object.kind, 'TokenRequest')
    assert.equal(review.object.metadata.name, 'robot')
    assert.deepEqual(review.object.spec.audiences, ['https://kubernetes.default.svc.cluster.local'])
    assert.equal(review.object.spec.expirationSeconds, 7200)

    const dry = await api.post(`${path}?dryRun=All`, tokenRequest())
    assert.equal(dry.status, 201, dry.text)
    assert.equal(webhook.received.at(-1)?.body.request['dryRun'], true)
  })

  it('issues the token a mutating webhook shortened: its patch of the TokenRequest counts before signing', async () => {
    const hookPath = '/shorten'
    webhook.handlers.set(hookPath, (r) =>
      answer(r, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify([{ op: 'replace', path: '/spec/expirationSeconds', value: 1800 }])).toString('base64') }),
    )
    await created(api, `${ADM}/mutatingwebhookconfigurations`, {
      metadata: { name: 'shorten' },
      webhooks: [
        {
          name: 'shorten.example.com',
          clientConfig: { url: webhook.base + hookPath, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['serviceaccounts/token'] }],
          matchConditions: [{ name: 'short-only', expression: "request.name == 'short'" }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    })
    const path = `${NS}/serviceaccounts/short/token`
    await eventually('the webhook shortens', async () => (await api.post(path, tokenRequest({ expirationSeconds: 7200 }))).body?.spec?.expirationSeconds === 1800, WAIT_MS)
    const reply = await api.post(path, tokenRequest({ expirationSeconds: 7200 }))
    assert.equal(reply.status, 201, reply.text)
    assert.equal(reply.body.spec.expirationSeconds, 1800)
    const claims = JSON.parse(Buffer.from(String(reply.body.status.token).split('.')[1] ?? '', 'base64url').toString())
    assert.equal(claims.exp - claims.iat, 1800)
  })
})

describe("NodeRestriction's token audiences", () => {
  let api: TestClient
  const admin = { connection: {}, headers: { authorization: 'Bearer admin-token' } }
  const pods: Record<string, any> = {}
  const container = [{ name: 'c', image: 'busybox' }]

  before(async () => {
    api = await startServer({
      authentication: { tokens },
      authorizationModes: ['Node', 'RBAC'],
      admission: { plugins: ['NodeRestriction'], serviceAccountNodeAudienceRestriction: true },
    })
    const vault = { name: 'vault', projected: { sources: [{ serviceAccountToken: { path: 'vault', audience: 'vault' } }] } }
    const inline = { name: 'secrets', csi: { driver: 'csi.example.com' } }
    for (const [path, body] of [
      [`${NS}/serviceaccounts`, { metadata: { name: 'robot' } }],
      ['/api/v1/nodes', { metadata: { name: 'n1' } }],
      ['/apis/storage.k8s.io/v1/csidrivers', { metadata: { name: 'csi.example.com' }, spec: { tokenRequests: [{ audience: 'csi-aud' }] } }],
      [`${NS}/pods`, { metadata: { name: 'web' }, spec: { nodeName: 'n1', serviceAccountName: 'robot', containers: container, volumes: [apiToken, vault, inline] } }],
      [`${NS}/pods`, { metadata: { name: 'claims' }, spec: { nodeName: 'n1', serviceAccountName: 'robot', containers: container, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'missing' } }] } }],
    ] as const)
      assert.equal((await api.post(path, body, admin)).status, 201)
    for (const name of ['web', 'claims']) pods[name] = (await api.get(`${NS}/pods/${name}`, admin)).body
    // The Node authorizer lets the kubelet ask once its graph holds the pod.
    await eventually('the node authorizer knows the pod', async () => (await ask('web', [])).status === 201, WAIT_MS)
  })

  const ask = (pod: string, audiences: string[]) =>
    api.post(`${NS}/serviceaccounts/robot/token`, tokenRequest({ audiences, boundObjectRef: podRef(pods[pod]) }), kubelet)

  it('issues tokens for the audiences the pod\'s volumes use: projected tokens and CSI drivers\' token requests', async () => {
    for (const audiences of [[], ['vault'], ['csi-aud']]) {
      const reply = await ask('web', audiences)
      assert.equal(reply.status, 201, `${JSON.stringify(audiences)}: ${reply.text}`)
    }
  })

  it('refuses another audience, and more than one, with 403 and no token', async () => {
    const other = await ask('web', ['payments'])
    assertRefused(
      other,
      403,
      'serviceaccounts "robot" is forbidden: audience "payments" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience',
    )
    assert.equal(other.body.status?.token, undefined)
    assertRefused(await ask('web', ['vault', 'csi-aud']), 403, 'serviceaccounts "robot" is forbidden: node may only request 0 or 1 audiences')
  })

  it('names the claim it could not read when no volume names the audience', async () => {
    assertRefused(
      await ask('claims', ['storage']),
      403,
      'serviceaccounts "robot" is forbidden: error validating audience "storage": persistentvolumeclaim "missing" not found',
    )
  })

  it('issues an audience the authorizer grants the node for that service account', async () => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1'
    const rule = { apiGroups: [''], resources: ['payments'], verbs: ['request-serviceaccounts-token-audience'], resourceNames: ['robot'] }
    assert.equal((await api.post(`${rbac}/clusterroles`, { metadata: { name: 'payments-audience' }, rules: [rule] }, admin)).status, 201)
    const binding = {
      metadata: { name: 'payments-audience' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'payments-audience' },
      subjects: [{ kind: 'User', name: 'system:node:n1' }],
    }
    assert.equal((await api.post(`${rbac}/clusterrolebindings`, binding, admin)).status, 201)
    await eventually('the grant is in effect', async () => (await ask('web', ['payments'])).status === 201, WAIT_MS)
    assertRefused(
      await ask('web', ['billing']),
      403,
      'serviceaccounts "robot" is forbidden: audience "billing" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience',
    )
  })
})
