/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook against a real
 * HTTPS webhook on loopback, trusted through the configuration's caBundle:
 * a patch applied and stored, a refusal with the webhook's message and
 * nothing stored, an unreachable or silent webhook under Ignore and Fail,
 * dry-run, reinvocation, match conditions, selectors, Service references,
 * and configuration changes acting without a restart.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, answer, patchAnswer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const CONFIGS = '/apis/admissionregistration.k8s.io/v1'

describe('admission webhooks', () => {
  let webhook: AdmissionWebhookServer
  let client: NodeWebhookClient
  let api: TestClient
  let counter = 0

  before(async () => {
    webhook = await startAdmissionWebhook(['hooks.webhook-system.svc'])
    client = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] } }, { webhookClient: client })
    await server.ready
    api = new TestClient(server)
  })
  after(async () => {
    client.close()
    await webhook.close()
  })

  /** A namespace of its own for one test, labelled so that only that test's webhooks select it. */
  async function testNamespace(): Promise<string> {
    const name = `hooks-${++counter}`
    const res = await api.post('/api/v1/namespaces', { metadata: { name, labels: { 'webhook-test': name } } })
    assert.equal(res.status, 201, res.text)
    return name
  }

  function hook(name: string, ns: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      name,
      clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { 'webhook-test': ns } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    }
  }

  async function configure(kind: 'mutating' | 'validating', name: string, webhooks: Record<string, unknown>[]): Promise<void> {
    const resource = `${kind}webhookconfigurations`
    const body = { metadata: { name }, webhooks }
    const res = await api.post(`${CONFIGS}/${resource}`, body)
    assert.equal(res.status, 201, res.text)
  }

  /** Waits until a dry-run create in `ns` reaches the webhook at `path` (the configuration is in effect). */
  async function inEffect(ns: string, path: string): Promise<void> {
    await eventually(`the webhook at ${path} is called`, async () => {
      const before = webhook.received.length
      await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'probe' } })
      return webhook.received.slice(before).some((r) => r.path === path)
    })
  }

  const configMap = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels }, data: { a: '1' } })

  it('applies a mutating webhook JSONPatch before storing, and sends the AdmissionReview fields upstream sends', async () => {
    const ns = await testNamespace()
    const path = `/mutate-${ns}`
    webhook.handlers.set(path, (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/labels/stamped', value: 'yes' }]))
    await configure('mutating', `stamp-${ns}`, [hook('stamp.example.com', ns, path)])
    await inEffect(ns, path)

    const created = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('one', { app: 'a' }))
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.metadata.labels.stamped, 'yes')
    const stored = await api.get(`/api/v1/namespaces/${ns}/configmaps/one`)
    assert.deepEqual(stored.body.metadata.labels, { app: 'a', stamped: 'yes' })

    const review = webhook.received.filter((r) => r.path === path).at(-1)!
    assert.equal(review.body.apiVersion, 'admission.k8s.io/v1')
    assert.equal(review.query, 'timeout=10s')
    const request = review.body.request
    assert.match(request['uid'], /^[0-9a-f-]{36}$/)
    assert.deepEqual(request['kind'], { group: '', version: 'v1', kind: 'ConfigMap' })
    assert.deepEqual(request['resource'], { group: '', version: 'v1', resource: 'configmaps' })
    assert.deepEqual(request['requestKind'], { group: '', version: 'v1', kind: 'ConfigMap' })
    assert.equal(request['operation'], 'CREATE')
    assert.equal(request['namespace'], ns)
    assert.equal(request['name'], 'one')
    assert.equal(request['dryRun'], false)
    assert.equal(request['object'].data.a, '1')
    assert.equal(request['oldObject'], null)
    assert.equal(request['options'].kind, 'CreateOptions')
    assert.ok(request['userInfo'].username)
  })

  // Upstream checks the namespace again after mutating admission (its BeforeCreate and BeforeUpdate): an object is
  // kept under its request's namespace, so a webhook moving it to another is refused rather than stored as a lie.
  it('refuses a mutating webhook that moves the object to another namespace, on create and on update, storing nothing', async () => {
    const ns = await testNamespace()
    const path = `/move-${ns}`
    webhook.handlers.set(path, (r) =>
      r.body.request['name'] === 'probe' ? answer(r, {}) : patchAnswer(r, [{ op: 'replace', path: '/metadata/namespace', value: 'kube-system' }]),
    )
    assert.equal((await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('before'))).status, 201)
    await configure('mutating', `move-${ns}`, [hook('move.example.com', ns, path)])
    await inEffect(ns, path)

    const created = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('moved'))
    assert.equal(created.status, 400, created.text)
    assert.equal(created.body.message, 'the namespace of the provided object does not match the namespace sent on the request')
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/moved`)).status, 404)
    assert.equal((await api.get('/api/v1/namespaces/kube-system/configmaps/moved')).status, 404)

    const updated = await api.update(`/api/v1/namespaces/${ns}/configmaps/before`, (cm) => ({ ...cm, data: { a: '2' } }))
    assert.equal(updated.status, 400, updated.text)
    const stored = (await api.get(`/api/v1/namespaces/${ns}/configmaps/before`)).body
    assert.deepEqual([stored.metadata.namespace, stored.data], [ns, { a: '1' }])
  })

  // Upstream sets these in BeforeCreate, after the mutating phase and before the validating one.
  it('shows mutating webhooks a create without a uid, a creation time or a generated name; validating ones with them', async () => {
    const ns = await testNamespace()
    const [mutate, validate] = [`/system-fields-m-${ns}`, `/system-fields-v-${ns}`]
    webhook.handlers.set(mutate, (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/uid', value: 'chosen-by-webhook' }]))
    webhook.handlers.set(validate, (r) => answer(r, {}))
    await configure('mutating', `system-fields-m-${ns}`, [hook('m.example.com', ns, mutate)])
    await configure('validating', `system-fields-v-${ns}`, [hook('v.example.com', ns, validate)])
    await inEffect(ns, mutate)
    await inEffect(ns, validate)

    const created = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { generateName: 'gen-' }, data: { a: '1' } })
    assert.equal(created.status, 201, created.text)
    const { name, uid, creationTimestamp } = created.body.metadata
    assert.match(name, /^gen-[a-z0-9]{5}$/)
    assert.notEqual(uid, 'chosen-by-webhook')
    const last = (path: string) => webhook.received.filter((r) => r.path === path).at(-1)!.body.request
    const mutating = last(mutate)
    assert.equal(mutating['name'], undefined, 'an empty name is left out, as Go omits it')
    assert.equal(mutating['object'].metadata.name, undefined)
    assert.equal(mutating['object'].metadata.generateName, 'gen-')
    assert.equal(mutating['object'].metadata.uid, undefined)
    assert.ok(!mutating['object'].metadata.creationTimestamp)
    const validating = last(validate)
    assert.deepEqual([validating['object'].metadata.name, validating['object'].metadata.uid, validating['object'].metadata.creationTimestamp], [name, uid, creationTimestamp])
  })

  it('refuses with the webhook message and code and stores nothing; warnings reach the client', async () => {
    const ns = await testNamespace()
    const path = `/deny-${ns}`
    webhook.handlers.set(path, (r) =>
      answer(r, { allowed: r.body.request['object'].metadata.name === 'probe', warnings: ['looked at it'], status: { code: 403, reason: 'Forbidden', message: 'configmaps here need approval' } }),
    )
    await configure('validating', `deny-${ns}`, [hook('deny.example.com', ns, path)])
    await inEffect(ns, path)

    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('refused'))
    assert.equal(res.status, 403)
    assert.equal(res.body.reason, 'Forbidden')
    assert.equal(res.body.message, 'admission webhook "deny.example.com" denied the request: configmaps here need approval')
    // Upstream's recorder writes a webhook's warnings as they come: the refusal carries them too.
    assert.equal(res.headers.get('warning'), '299 - "looked at it"')
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/refused`)).status, 404)

    const allowed = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('probe'))
    assert.equal(allowed.status, 201)
    assert.match(allowed.headers.get('warning') ?? '', /looked at it/)
  })

  it('a denial without a code is a 400 saying there is no explanation', async () => {
    const ns = await testNamespace()
    const path = `/deny-plain-${ns}`
    webhook.handlers.set(path, (r) => answer(r, { allowed: r.body.request['object'].metadata.name === 'probe' }))
    await configure('validating', `deny-plain-${ns}`, [hook('plain.example.com', ns, path)])
    await inEffect(ns, path)
    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('refused'))
    assert.equal(res.status, 400)
    assert.equal(res.body.message, 'admission webhook "plain.example.com" denied the request without explanation')
  })

  it('an unreachable webhook passes under Ignore and refuses with 500 under Fail, storing nothing', async () => {
    const ns = await testNamespace()
    const gone = 'https://127.0.0.1:1/gone'
    const unreachable = (name: string, failurePolicy: string, resource: string) =>
      hook(name, ns, '/unused', { clientConfig: { url: gone, caBundle: webhook.caBundle }, failurePolicy, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: [resource] }] })
    await configure('validating', `unreachable-${ns}`, [unreachable('ignore.example.com', 'Ignore', 'configmaps'), unreachable('fail.example.com', 'Fail', 'secrets')])
    await eventually('the failing webhook is in effect', async () => (await api.post(`/api/v1/namespaces/${ns}/secrets?dryRun=All`, { metadata: { name: 'p' } })).status === 500)

    assert.equal((await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('passes'))).status, 201)
    const res = await api.post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'refused' } })
    assert.equal(res.status, 500)
    assert.equal(res.body.reason, 'InternalError')
    assert.match(res.body.message, /^Internal error occurred: failed calling webhook "fail\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/gone\?timeout=10s": /)
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/secrets/refused`)).status, 404)
  })

  it('a webhook that does not answer within timeoutSeconds fails the call', async () => {
    const ns = await testNamespace()
    const path = `/slow-${ns}`
    webhook.handlers.set(path, () => 'hang')
    await configure('mutating', `slow-${ns}`, [hook('slow.example.com', ns, path, { timeoutSeconds: 1 })])
    await inEffect(ns, path)
    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('late'))
    assert.equal(res.status, 500)
    assert.match(res.body.message, /failed calling webhook "slow\.example\.com": failed to call webhook: Post .*timeout=1s.*context deadline exceeded/)
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/late`)).status, 404)
  })

  it('tells a NoneOnDryRun webhook about a dry run, which stores nothing', async () => {
    const ns = await testNamespace()
    const path = `/dry-${ns}`
    webhook.handlers.set(path, (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/labels', value: { dry: String(r.body.request['dryRun']) } }]))
    await configure('mutating', `dry-${ns}`, [hook('dry.example.com', ns, path, { sideEffects: 'NoneOnDryRun' })])
    await inEffect(ns, path)
    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, configMap('dry'))
    assert.equal(res.status, 201)
    assert.deepEqual(res.body.metadata.labels, { dry: 'true' })
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/dry`)).status, 404)
  })

  it('calls an IfNeeded webhook again when a later webhook changed the object', async () => {
    const ns = await testNamespace()
    const seen: string[] = []
    webhook.handlers.set(`/first-${ns}`, (r) => {
      seen.push(JSON.stringify(r.body.request['object'].metadata.labels ?? {}))
      return answer(r, {})
    })
    webhook.handlers.set(`/second-${ns}`, (r) =>
      r.body.request['object'].metadata.labels?.second ? answer(r, {}) : patchAnswer(r, [{ op: 'add', path: '/metadata/labels', value: { second: 'done' } }]),
    )
    await configure('mutating', `reinvoke-${ns}`, [
      hook('first.example.com', ns, `/first-${ns}`, { reinvocationPolicy: 'IfNeeded' }),
      hook('second.example.com', ns, `/second-${ns}`),
    ])
    await inEffect(ns, `/second-${ns}`)
    seen.length = 0
    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'again' } })
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(seen, ['{}', '{"second":"done"}'])
  })

  it('sends only what the match conditions select; a failing condition under Fail is 403', async () => {
    const ns = await testNamespace()
    const path = `/conditions-${ns}`
    webhook.handlers.set(path, (r) => answer(r, { allowed: false, status: { message: `saw ${r.body.request['name']}` } }))
    await configure('validating', `conditions-${ns}`, [
      hook('conditions.example.com', ns, path, {
        matchConditions: [
          { name: 'only-guarded', expression: "object.metadata.name.startsWith('guarded')" },
          { name: 'admin-checks', expression: "authorizer.group('').resource('configmaps').namespace(request.namespace).check('create').allowed()" },
        ],
      }),
      hook('broken.example.com', ns, path, {
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }],
        matchConditions: [{ name: 'missing-field', expression: "object.data.nothing == 'x'" }],
      }),
    ])
    await eventually('the conditions are in effect', async () => (await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, configMap('guarded-probe'))).status === 400)
    assert.equal((await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('free'))).status, 201)
    const refused = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('guarded-1'))
    assert.equal(refused.body.message, 'admission webhook "conditions.example.com" denied the request: saw guarded-1')

    const broken = await api.post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 's' }, data: {} })
    assert.equal(broken.status, 403)
    assert.match(broken.body.message, /^secrets "s" is forbidden: expression 'object\.data\.nothing == 'x'' resulted in error: /)
    assert.equal((await api.get(`/api/v1/namespaces/${ns}/secrets/s`)).status, 404)
  })

  it('honours the namespace and object selectors', async () => {
    const ns = await testNamespace()
    const other = `${ns}-other`
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: other } })).status, 201)
    const path = `/selectors-${ns}`
    webhook.handlers.set(path, (r) => answer(r, { allowed: false, status: { message: 'selected' } }))
    await configure('validating', `selectors-${ns}`, [hook('selectors.example.com', ns, path, { objectSelector: { matchExpressions: [{ key: 'guard', operator: 'Exists' }] } })])
    await eventually('the selector webhook is in effect', async () => (await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, configMap('p', { guard: '1' }))).status === 400)
    assert.equal((await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('unlabelled'))).status, 201)
    assert.equal((await api.post(`/api/v1/namespaces/${other}/configmaps`, configMap('elsewhere', { guard: '1' }))).status, 201)
    assert.equal((await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('guarded', { guard: '1' }))).status, 400)
    // An update is selected by the old object's labels too.
    const update = await api.put(`/api/v1/namespaces/${ns}/configmaps/unlabelled`, { ...configMap('unlabelled'), metadata: { name: 'unlabelled', labels: { guard: 'now' } } })
    assert.equal(update.status, 400)
  })

  it('calls a webhook named by a Service reference, checking the service name on its certificate, with AdmissionReview v1beta1', async () => {
    const ns = await testNamespace()
    assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'webhook-system' } })).status, 201)
    const svc = { metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: webhook.port }] } }
    assert.equal((await api.post('/api/v1/namespaces/webhook-system/services', svc)).status, 201)
    const endpoints = { metadata: { name: 'hooks' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: webhook.port }] }] }
    assert.equal((await api.post('/api/v1/namespaces/webhook-system/endpoints', endpoints)).status, 201)
    const path = `/service-${ns}`
    webhook.handlers.set(path, (r) => ({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: { allowed: true, patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/data/via', value: r.body.apiVersion }])).toString('base64') } }))
    await configure('mutating', `service-${ns}`, [
      hook('service.example.com', ns, path, { clientConfig: { service: { namespace: 'webhook-system', name: 'hooks', path }, caBundle: webhook.caBundle }, admissionReviewVersions: ['v1beta1'] }),
    ])
    await inEffect(ns, path)
    const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('via-service'))
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.data.via, 'admission.k8s.io/v1beta1')
  })

  it('acts on a changed or deleted configuration without a restart', async () => {
    const ns = await testNamespace()
    webhook.handlers.set(`/v1-${ns}`, (r) => answer(r, { allowed: false, status: { message: 'first version' } }))
    webhook.handlers.set(`/v2-${ns}`, (r) => answer(r, { allowed: false, status: { message: 'second version' } }))
    const name = `changing-${ns}`
    await configure('validating', name, [hook('changing.example.com', ns, `/v1-${ns}`)])
    const message = async () => (await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('c'))).body.message as string
    await eventually('the first version refuses', async () => (await message()).endsWith('first version'))

    const stored = (await api.get(`${CONFIGS}/validatingwebhookconfigurations/${name}`)).body
    stored.webhooks[0].clientConfig.url = `${webhook.base}/v2-${ns}`
    assert.equal((await api.put(`${CONFIGS}/validatingwebhookconfigurations/${name}`, stored)).status, 200)
    await eventually('the second version refuses', async () => (await message()).endsWith('second version'))

    assert.equal((await api.delete(`${CONFIGS}/validatingwebhookconfigurations/${name}`)).status, 200)
    await eventually('nothing refuses', async () => (await api.post(`/api/v1/namespaces/${ns}/configmaps`, configMap('c'))).status === 201)
  })

  it('never sends webhook configurations to webhooks', async () => {
    const path = '/everything'
    webhook.handlers.set(path, (r) => answer(r, { allowed: false }))
    const everything = {
      name: 'everything.example.com',
      clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
      rules: [{ operations: ['*'], apiGroups: ['admissionregistration.k8s.io'], apiVersions: ['*'], resources: ['*'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    }
    await configure('validating', 'lock-out', [everything])
    const res = await api.delete(`${CONFIGS}/validatingwebhookconfigurations/lock-out`)
    assert.equal(res.status, 200)
    assert.equal(webhook.received.filter((r) => r.path === path).length, 0)
  })
})
