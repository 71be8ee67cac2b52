/**
 * Admission of writes through the scale subresource: policies and webhooks
 * see an autoscaling/v1 Scale (the requested one as `object`, the stored
 * one's as `oldObject`), never the object it scales, for a Deployment and
 * for a custom resource whose CRD keeps its replicas elsewhere. A mutating
 * webhook's Scale decides the replicas written, and nothing else.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { type AdmissionWebhookServer, answer, patchAnswer, startAdmissionWebhook } from './admission-webhook-server.js'
import { createServedDefinition } from './crd-fixtures.js'
import { createTestServer, eventually, startServer, TestClient } from './harness.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const MERGE = 'application/merge-patch+json'
const WAIT_MS = 60_000

/** A Widget keeps its replicas in spec.size and reports them in status.count. */
const widgets = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
              status: { type: 'object', properties: { count: { type: 'integer' } } },
            },
          },
        },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.count' } },
      },
    ],
  },
}

const deployment = (name: string, replicas = 1) => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
  },
})

async function created(api: TestClient, path: string, body: unknown): Promise<any> {
  const res = await api.post(path, body)
  assert.equal(res.status, 201, res.text)
  return res.body
}

async function namespace(api: TestClient, name: string, labels: Record<string, string> = {}): Promise<void> {
  await created(api, '/api/v1/namespaces', { metadata: { name, labels } })
}

/** A policy for UPDATE of `<resource>/scale` in `group`, with these validations, and its Deny binding. */
async function scalePolicy(api: TestClient, name: string, group: string, resource: string, ...expressions: string[]): Promise<void> {
  await created(api, `${ADM}/validatingadmissionpolicies`, {
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['UPDATE'], resources: [`${resource}/scale`] }] },
      validations: expressions.map((expression) => ({ expression })),
    },
  })
  await created(api, `${ADM}/validatingadmissionpolicybindings`, { metadata: { name: `${name}-binding` }, spec: { policyName: name, validationActions: ['Deny'] } })
}

/** Waits until a dry-run scale of the object at `path` to `replicas` is answered `status`: the configuration is in effect. */
async function untilScaleAnswered(api: TestClient, path: string, replicas: number, status: number): Promise<void> {
  await eventually(`a dry-run scale of ${path} is answered ${status}`, async () => (await api.patch(`${path}/scale?dryRun=All`, { spec: { replicas } }, MERGE)).status === status, WAIT_MS)
}

describe('ValidatingAdmissionPolicy on the scale subresource', () => {
  const capAtThree = '!has(object.spec.replicas) || object.spec.replicas <= 3'

  it("refuses a custom resource's scale past the policy's limit with 422, and the Widget keeps its size", async () => {
    const api = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await namespace(api, 'ns')
    const path = '/apis/example.com/v1/namespaces/ns/widgets'
    await createServedDefinition(api, widgets, path)
    await created(api, path, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } })
    await scalePolicy(api, 'max-replicas', 'example.com', 'widgets', capAtThree)
    await untilScaleAnswered(api, `${path}/w`, 100, 422)

    const patched = await api.patch(`${path}/w/scale`, { spec: { replicas: 100 } }, MERGE)
    assert.equal(patched.status, 422, patched.text)
    assert.equal(patched.body.reason, 'Invalid')
    assert.equal(
      patched.body.message,
      `widgets.example.com "w" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: ${capAtThree}`,
    )
    const scale = (await api.get(`${path}/w/scale`)).body
    const put = await api.put(`${path}/w/scale`, { ...scale, spec: { replicas: 100 } })
    assert.equal(put.status, 422, put.text)
    assert.equal((await api.get(`${path}/w`)).body.spec.size, 1)

    // Within the limit, the same write goes through, into spec.size.
    const allowed = await api.patch(`${path}/w/scale`, { spec: { replicas: 3 } }, MERGE)
    assert.equal(allowed.status, 200, allowed.text)
    assert.equal((await api.get(`${path}/w`)).body.spec.size, 3)
  })

  it("refuses a Deployment's scale past the policy's limit with 422, by PATCH and PUT, and stores nothing", async () => {
    const api = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    const path = '/apis/apps/v1/namespaces/default/deployments'
    await created(api, path, deployment('web'))
    // A Deployment has spec.replicas too: the second rule tells that the policy sees its Scale.
    await scalePolicy(api, 'max-replicas', 'apps', 'deployments', capAtThree, "object.kind == 'Scale'")
    await untilScaleAnswered(api, `${path}/web`, 100, 422)

    const patched = await api.patch(`${path}/web/scale`, { spec: { replicas: 100 } }, MERGE)
    assert.equal(patched.status, 422, patched.text)
    assert.equal(
      patched.body.message,
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: ${capAtThree}`,
    )
    const scale = (await api.get(`${path}/web/scale`)).body
    assert.equal((await api.put(`${path}/web/scale`, { ...scale, spec: { replicas: 100 } })).status, 422)
    const stored = (await api.get(`${path}/web`)).body
    assert.equal(stored.spec.replicas, 1)
    assert.equal(stored.metadata.generation, 1)
    assert.equal((await api.patch(`${path}/web/scale`, { spec: { replicas: 2 } }, MERGE)).status, 200)
    assert.equal((await api.get(`${path}/web`)).body.spec.replicas, 2)
  })

  it('gives the policy the new Scale as object and the stored one as oldObject, and the request as a Scale', async () => {
    const api = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await namespace(api, 'ns')
    const path = '/apis/example.com/v1/namespaces/ns/widgets'
    await createServedDefinition(api, widgets, path)
    await created(api, path, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } })
    // One step at a time: a Widget seen in place of a Scale (no kind Scale, no spec.replicas) fails every write.
    const oneStep = [
      "object.kind == 'Scale' && object.apiVersion == 'autoscaling/v1' && oldObject.kind == 'Scale'",
      "request.kind.group == 'autoscaling' && request.kind.kind == 'Scale' && request.requestKind.group == 'autoscaling' && request.requestKind.kind == 'Scale'",
      'object.spec.replicas <= oldObject.spec.replicas + 1',
    ].join(' && ')
    await scalePolicy(api, 'one-step', 'example.com', 'widgets', oneStep)
    await untilScaleAnswered(api, `${path}/w`, 5, 422)

    const grown = await api.patch(`${path}/w/scale`, { spec: { replicas: 2 } }, MERGE)
    assert.equal(grown.status, 200, grown.text)
    assert.equal((await api.get(`${path}/w`)).body.spec.size, 2)
    const leap = await api.patch(`${path}/w/scale`, { spec: { replicas: 5 } }, MERGE)
    assert.equal(leap.status, 422, leap.text)
    assert.equal((await api.get(`${path}/w`)).body.spec.size, 2)
  })

  it('shows a policy matching another version of the resource the same Scale, unconverted', async () => {
    const api = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await namespace(api, 'ns')
    const [v1] = widgets.spec.versions
    const twoVersions = { ...widgets, spec: { ...widgets.spec, versions: [v1, { ...v1, name: 'v2', storage: false }] } }
    const path = '/apis/example.com/v1/namespaces/ns/widgets'
    await createServedDefinition(api, twoVersions, path)
    await created(api, path, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } })
    await created(api, `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'v2-cap' },
      spec: {
        matchConstraints: {
          matchPolicy: 'Equivalent',
          resourceRules: [{ apiGroups: ['example.com'], apiVersions: ['v2'], operations: ['UPDATE'], resources: ['widgets/scale'] }],
        },
        validations: [{ expression: "object.apiVersion == 'autoscaling/v1' && object.spec.replicas <= 3" }],
      },
    })
    await created(api, `${ADM}/validatingadmissionpolicybindings`, { metadata: { name: 'v2-cap' }, spec: { policyName: 'v2-cap', validationActions: ['Deny'] } })
    await untilScaleAnswered(api, `${path}/w`, 5, 422)

    assert.equal((await api.patch(`${path}/w/scale`, { spec: { replicas: 5 } }, MERGE)).status, 422)
    const allowed = await api.patch(`${path}/w/scale`, { spec: { replicas: 2 } }, MERGE)
    assert.equal(allowed.status, 200, allowed.text)
    assert.equal((await api.get(`${path}/w`)).body.spec.size, 2)
  })
})

describe('MutatingAdmissionPolicy on the scale subresource', () => {
  it("mutates the Scale: its replicas are what the Deployment gets, an apply configuration's other fields are not", async () => {
    const api = await startServer({ admission: { plugins: ['MutatingAdmissionPolicy'], mutatingAdmissionPolicy: true } })
    const path = '/apis/apps/v1/namespaces/default/deployments'
    await created(api, path, deployment('web'))
    await created(api, `${ADM}/mutatingadmissionpolicies`, {
      metadata: { name: 'cap' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['deployments/scale'] }] },
        matchConditions: [{ name: 'over-three', expression: "object.kind == 'Scale' && object.spec.replicas > 3" }],
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"capped": "yes"}}, spec: Object.spec{replicas: 3}}' } }],
      },
    })
    await created(api, `${ADM}/mutatingadmissionpolicybindings`, { metadata: { name: 'cap' }, spec: { policyName: 'cap' } })
    await eventually('the cap shows', async () => (await api.patch(`${path}/web/scale?dryRun=All`, { spec: { replicas: 9 } }, MERGE)).body?.spec?.replicas === 3, WAIT_MS)

    const scaled = await api.patch(`${path}/web/scale`, { spec: { replicas: 9 } }, MERGE)
    assert.equal(scaled.status, 200, scaled.text)
    assert.deepEqual(scaled.body.spec, { replicas: 3 })
    const stored = (await api.get(`${path}/web`)).body
    assert.equal(stored.spec.replicas, 3)
    assert.equal(stored.metadata.labels, undefined)
  })
})

describe('admission webhooks on the scale subresource', () => {
  let webhook: AdmissionWebhookServer
  let client: NodeWebhookClient
  let api: TestClient
  let counter = 0

  before(async () => {
    webhook = await startAdmissionWebhook()
    client = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] } }, { webhookClient: client })
    await server.ready
    api = new TestClient(server)
    await createServedDefinition(api, widgets, '/apis/example.com/v1/widgets')
  })
  after(async () => {
    client.close()
    await webhook.close()
  })

  /** A namespace of its own for one test, labelled so that only that test's webhooks select it. */
  async function testNamespace(): Promise<string> {
    const name = `scale-hooks-${++counter}`
    await namespace(api, name, { 'webhook-test': name })
    return name
  }

  async function configure(kind: 'mutating' | 'validating', ns: string, path: string, group: string, resource: string): Promise<void> {
    await created(api, `${ADM}/${kind}webhookconfigurations`, {
      metadata: { name: `${kind}-${ns}` },
      webhooks: [
        {
          name: `${kind}.example.com`,
          clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
          rules: [{ operations: ['UPDATE'], apiGroups: [group], apiVersions: ['v1'], resources: [`${resource}/scale`] }],
          namespaceSelector: { matchLabels: { 'webhook-test': ns } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    })
  }

  /** Waits until a dry-run scale of the object at `objectPath` reaches the webhook at `path`. */
  async function inEffect(objectPath: string, path: string): Promise<void> {
    await eventually(`the webhook at ${path} is called`, async () => {
      const before = webhook.received.length
      await api.patch(`${objectPath}/scale?dryRun=All`, { spec: { replicas: 1 } }, MERGE)
      return webhook.received.slice(before).some((r) => r.path === path)
    })
  }

  it("sends a validating webhook the Scales, and its refusal leaves the Deployment's replicas", async () => {
    const ns = await testNamespace()
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`
    await created(api, deployments, deployment('web'))
    const path = `/validate-${ns}`
    webhook.handlers.set(path, (r) => {
      const replicas = r.body.request['object']?.spec?.replicas ?? 0
      return answer(r, replicas <= 3 ? {} : { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'at most 3 replicas' } })
    })
    await configure('validating', ns, path, 'apps', 'deployments')
    await inEffect(`${deployments}/web`, path)

    const res = await api.patch(`${deployments}/web/scale`, { spec: { replicas: 100 } }, MERGE)
    assert.equal(res.status, 403, res.text)
    assert.equal(res.body.message, 'admission webhook "validating.example.com" denied the request: at most 3 replicas')
    assert.equal((await api.get(`${deployments}/web`)).body.spec.replicas, 1)

    const request = webhook.received.filter((r) => r.path === path).at(-1)!.body.request
    assert.deepEqual(request['kind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' })
    assert.deepEqual(request['requestKind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' })
    assert.deepEqual(request['resource'], { group: 'apps', version: 'v1', resource: 'deployments' })
    assert.equal(request['subResource'], 'scale')
    assert.equal(request['operation'], 'UPDATE')
    assert.equal(request['name'], 'web')
    assert.equal(request['object'].apiVersion, 'autoscaling/v1')
    assert.equal(request['object'].kind, 'Scale')
    assert.deepEqual(request['object'].spec, { replicas: 100 })
    assert.equal(request['object'].status.selector, 'app=web')
    assert.equal(request['object'].metadata.name, 'web')
    assert.equal(request['oldObject'].kind, 'Scale')
    assert.deepEqual(request['oldObject'].spec, { replicas: 1 })
    assert.equal(request['object'].spec.template, undefined, 'no part of the Deployment is sent')
  })

  it("lets a mutating webhook's Scale set a custom resource's replicas, and nothing else of it", async () => {
    const ns = await testNamespace()
    const widgetsIn = `/apis/example.com/v1/namespaces/${ns}/widgets`
    await created(api, widgetsIn, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, color: 'red' } })
    const path = `/mutate-${ns}`
    webhook.handlers.set(path, (r) =>
      patchAnswer(r, [
        { op: 'replace', path: '/spec/replicas', value: 3 },
        // Fields of the Widget, written as if the object were the Widget: the Scale has none of them.
        { op: 'add', path: '/spec/color', value: 'black' },
        { op: 'add', path: '/spec/size', value: 50 },
        { op: 'add', path: '/metadata/labels', value: { injected: 'yes' } },
      ]),
    )
    await configure('mutating', ns, path, 'example.com', 'widgets')
    await inEffect(`${widgetsIn}/w`, path)

    const res = await api.patch(`${widgetsIn}/w/scale`, { spec: { replicas: 100 } }, MERGE)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'Scale')
    assert.deepEqual(res.body.spec, { replicas: 3 })
    const stored = (await api.get(`${widgetsIn}/w`)).body
    assert.deepEqual(stored.spec, { size: 3, color: 'red' })
    assert.equal(stored.metadata.labels, undefined)

    const request = webhook.received.filter((r) => r.path === path).at(-1)!.body.request
    assert.deepEqual(request['kind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' })
    assert.equal(request['object'].kind, 'Scale')
    assert.deepEqual(request['object'].spec, { replicas: 100 })
    assert.deepEqual(request['oldObject'].spec, { replicas: 1 })
  })

  it("refuses a mutating webhook's negative replicas for a Deployment as an invalid Scale, and stores nothing", async () => {
    const ns = await testNamespace()
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`
    await created(api, deployments, deployment('web', 2))
    const path = `/negative-${ns}`
    webhook.handlers.set(path, (r) => patchAnswer(r, [{ op: 'replace', path: '/spec/replicas', value: -1 }]))
    await configure('mutating', ns, path, 'apps', 'deployments')
    await inEffect(`${deployments}/web`, path)

    const res = await api.patch(`${deployments}/web/scale`, { spec: { replicas: 4 } }, MERGE)
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0')
    assert.equal((await api.get(`${deployments}/web`)).body.spec.replicas, 2)
  })
})
