/**
 * CEL expressions whose work grows while they run (a list doubled through
 * `cel.bind` or policy variables, loops nested over the largest lists a
 * request may hold, a string repeated by `replace` or `join`): each is
 * cancelled while it runs once its actual cost passes upstream's per-call
 * limit, with upstream's message and status, as a CRD rule, a
 * ValidatingAdmissionPolicy, a MutatingAdmissionPolicy and a webhook match
 * condition. Nothing is stored, the server stays ready and answers the next
 * request. A CRD rule
 * upstream already refuses when the CRD is written (its estimated cost is
 * too high) may be refused then instead.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { ADMISSION_ATTACKS, ATTACK_DATA, celAttacks, doublingVariables, EIGHT, TEXT, THOUSAND } from '../fuzz/cel-attacks.js'
import { type AdmissionWebhookServer, answer, startAdmissionWebhook } from './admission-webhook-server.js'
import { causeLines, createTestServer, eventually, startServer, TestClient } from './harness.js'

const CANCELLED = 'operation cancelled: actual cost limit exceeded'
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
const ADM = '/apis/admissionregistration.k8s.io/v1'
const WAIT_MS = 60_000

/** The server is ready and writes an ordinary object, and what was refused is not stored. */
async function stillServing(client: TestClient, ns: string, name: string): Promise<void> {
  const ready = await client.get('/readyz')
  assert.equal(ready.status, 200, ready.text)
  const ordinary = await client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `ordinary-${name}` }, data: { a: '1' } })
  assert.equal(ordinary.status, 201, ordinary.text)
}

/** When the runtime lets a test collect garbage, the heap is back near where it started. */
function heapReturns(startedAt: number): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (typeof collect !== 'function') return
  collect()
  assert.ok(process.memoryUsage().heapUsed - startedAt < 256 * 1024 * 1024, 'the heap came back')
}

const heapNow = (): number => {
  ;(globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().heapUsed
}

describe('CRD rules cancelled while they run', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  const spec = {
    type: 'object',
    properties: {
      l: { type: 'array', maxItems: 8, items: { type: 'string', maxLength: 8 } },
      s: { type: 'string', maxLength: 1000 },
      n: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 1 } },
    },
  }

  celAttacks('self.l', 'self.s', 'self.n').forEach(({ name, expression }, i) => {
    it(`cancels ${name} with 422 and upstream's message, stores nothing and stays ready`, async () => {
      const plural = `attacks${i}`
      const rule = { rule: expression, message: 'attack' }
      const crd = {
        metadata: { name: `${plural}.attacks.example.com` },
        spec: {
          group: 'attacks.example.com',
          names: { plural, kind: `Attack${i}` },
          scope: 'Namespaced',
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { ...spec, 'x-kubernetes-validations': [rule] } } } } }],
        },
      }
      const written = await client.post(CRDS, crd)
      if (written.status === 422) {
        // Upstream refuses this rule when the CRD is written: its estimated cost is past the limit.
        assert.ok(!name.startsWith('cel.bind'), `a rule upstream accepts was refused: ${written.text}`)
        assert.ok(causeLines(written).some((c) => c.includes('Forbidden: estimated rule cost exceeds budget')), written.text)
        assert.equal((await client.get(`${CRDS}/${plural}.attacks.example.com`)).status, 404)
        await stillServing(client, 'default', plural)
        return
      }
      assert.equal(written.status, 201, written.text)
      const path = `/apis/attacks.example.com/v1/namespaces/default/${plural}`
      await eventually(`${plural} are served`, async () => (await client.get(path)).status === 200, WAIT_MS)

      const heap = heapNow()
      const res = await client.post(path, { apiVersion: 'attacks.example.com/v1', kind: `Attack${i}`, metadata: { name: 'victim' }, spec: { l: EIGHT, s: TEXT, n: THOUSAND } })
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.reason, 'Invalid')
      assert.deepEqual(causeLines(res), [`spec: Invalid value: "object": '${CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: attack`])
      assert.equal((await client.get(`${path}/victim`)).status, 404)
      await stillServing(client, 'default', plural)
      heapReturns(heap)
    })
  })
})

/** What both kinds of attacking policy share: ConfigMap creates in namespace `ns` whose name starts with `victim`, failing closed. */
function attackPolicySpec(ns: string, variables: { name: string; expression: string }[]) {
  return {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { attack: ns } },
    },
    matchConditions: [{ name: 'victims-only', expression: "object.metadata.name.startsWith('victim')" }],
    variables,
  }
}

describe('ValidatingAdmissionPolicy expressions cancelled while they run', () => {
  let client: TestClient
  before(async () => {
    client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
  })

  /** A policy of `expression` (with `variables`) on ConfigMaps of namespace `ns`, bound with Deny; waits until it acts. */
  async function install(ns: string, expression: string, variables: { name: string; expression: string }[] = []): Promise<void> {
    assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: ns, labels: { attack: ns } } })).status, 201)
    const policy = { metadata: { name: ns }, spec: { ...attackPolicySpec(ns, variables), validations: [{ expression }] } }
    const written = await client.post(`${ADM}/validatingadmissionpolicies`, policy)
    assert.equal(written.status, 201, written.text)
    const bound = await client.post(`${ADM}/validatingadmissionpolicybindings`, { metadata: { name: `${ns}-binding` }, spec: { policyName: ns, validationActions: ['Deny'] } })
    assert.equal(bound.status, 201, bound.text)
    const probe = { metadata: { name: 'victim-probe' }, data: ATTACK_DATA }
    await eventually(`the policy ${ns} acts`, async () => (await client.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, probe)).status === 403, WAIT_MS)
  }

  async function refused(ns: string, expression: string): Promise<void> {
    const heap = heapNow()
    const res = await client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'victim' }, data: ATTACK_DATA })
    assert.equal(res.status, 403, res.text)
    assert.equal(res.body.reason, 'Forbidden')
    assert.equal(
      res.body.message,
      `configmaps "victim" is forbidden: ValidatingAdmissionPolicy '${ns}' with binding '${ns}-binding' denied request: expression '${expression}' resulted in error: ${CANCELLED}`,
    )
    assert.equal((await client.get(`/api/v1/namespaces/${ns}/configmaps/victim`)).status, 404)
    await stillServing(client, ns, 'after')
    heapReturns(heap)
  }

  for (const steps of [22, 26]) {
    it(`cancels variables that double a list ${steps} times, counted once, with 403 and stores nothing`, async () => {
      const ns = `variables-${steps}`
      const variables = doublingVariables(steps)
      const expression = `size(variables.v${steps}) > 0`
      await install(ns, expression, variables)
      await refused(ns, expression)
    })
  }

  ADMISSION_ATTACKS.forEach(({ name, expression }, i) => {
    it(`cancels ${name} with 403 and stores nothing`, async () => {
      const ns = `policy-attack-${i}`
      await install(ns, expression)
      await refused(ns, expression)
    })
  })
})

describe('webhook match conditions cancelled while they run', () => {
  let webhook: AdmissionWebhookServer
  let webhookClient: NodeWebhookClient
  let api: TestClient

  before(async () => {
    webhook = await startAdmissionWebhook()
    webhookClient = nodeWebhookClient()
    const server = createTestServer({ admission: { plugins: ['ValidatingAdmissionWebhook'] } }, { webhookClient })
    await server.ready
    api = new TestClient(server)
  })
  after(async () => {
    webhookClient.close()
    await webhook.close()
  })

  ADMISSION_ATTACKS.forEach(({ name, expression }, i) => {
    it(`cancels ${name} under failurePolicy Fail with 403, never calls the webhook and stores nothing`, async () => {
      const ns = `hook-attack-${i}`
      assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: ns, labels: { attack: ns } } })).status, 201)
      const path = `/attack-${i}`
      webhook.handlers.set(path, (r) => answer(r, {}))
      const configuration = {
        metadata: { name: ns },
        webhooks: [
          {
            name: 'attack.example.com',
            clientConfig: { url: webhook.base + path, caBundle: webhook.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { attack: ns } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            matchConditions: [{ name: 'attack', expression: `!object.metadata.name.startsWith('victim') || (${expression})` }],
          },
        ],
      }
      const written = await api.post(`${ADM}/validatingwebhookconfigurations`, configuration)
      assert.equal(written.status, 201, written.text)
      const probe = { metadata: { name: 'victim-probe' }, data: ATTACK_DATA }
      await eventually(`the webhook ${ns} is configured`, async () => (await api.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, probe)).status === 403, WAIT_MS)

      const heap = heapNow()
      const calls = webhook.received.length
      const res = await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'victim' }, data: ATTACK_DATA })
      assert.equal(res.status, 403, res.text)
      assert.equal(
        res.body.message,
        `configmaps "victim" is forbidden: expression '!object.metadata.name.startsWith('victim') || (${expression})' resulted in error: ${CANCELLED}`,
      )
      assert.equal(webhook.received.length, calls, 'the webhook was not called')
      assert.equal((await api.get(`/api/v1/namespaces/${ns}/configmaps/victim`)).status, 404)
      await stillServing(api, ns, 'after')
      heapReturns(heap)
    })
  })
})

describe('MutatingAdmissionPolicy expressions cancelled while they run', () => {
  let client: TestClient
  before(async () => {
    client = await startServer({ admission: { plugins: ['MutatingAdmissionPolicy'], mutatingAdmissionPolicy: true } })
  })

  /** A list of lists that shares one list 2^24 times: small to build, enormous to write out as JSON. */
  let shared = 'a24'
  for (let i = 24; i >= 2; i--) shared = `cel.bind(a${i}, [a${i - 1}, a${i - 1}], ${shared})`
  shared = `cel.bind(a1, [object.metadata.name], ${shared})`

  const cases = [
    {
      name: 'variables that double a list 26 times',
      variables: doublingVariables(26),
      mutation: { patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"size": string(size(variables.v26))}}}' } },
    },
    {
      name: 'a JSONPatch whose value shares one list sixteen million times',
      variables: [],
      mutation: { patchType: 'JSONPatch', jsonPatch: { expression: `[JSONPatch{op: "add", path: "/metadata/annotations", value: {"x": ${shared}}}]` } },
    },
  ]
  cases.forEach(({ name, variables, mutation }, i) => {
    it(`cancels ${name} with 403, stores nothing and stays ready`, async () => {
      const ns = `mutating-attack-${i}`
      assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: ns, labels: { attack: ns } } })).status, 201)
      const policy = { metadata: { name: ns }, spec: { ...attackPolicySpec(ns, variables), mutations: [mutation] } }
      const written = await client.post(`${ADM}/mutatingadmissionpolicies`, policy)
      assert.equal(written.status, 201, written.text)
      const bound = await client.post(`${ADM}/mutatingadmissionpolicybindings`, { metadata: { name: `${ns}-binding` }, spec: { policyName: ns } })
      assert.equal(bound.status, 201, bound.text)
      const probe = { metadata: { name: 'victim-probe' }, data: ATTACK_DATA }
      await eventually(`the policy ${ns} acts`, async () => (await client.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, probe)).status === 403, WAIT_MS)

      const heap = heapNow()
      const res = await client.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'victim' }, data: ATTACK_DATA })
      assert.equal(res.status, 403, res.text)
      assert.match(res.body.message, new RegExp(`^configmaps "victim" is forbidden: policy '${ns}' with binding '${ns}-binding' denied request: expression '.*' resulted in error: ${CANCELLED}$`))
      assert.equal((await client.get(`/api/v1/namespaces/${ns}/configmaps/victim`)).status, 404)
      await stillServing(client, ns, 'after')
      heapReturns(heap)
    })
  })
})
