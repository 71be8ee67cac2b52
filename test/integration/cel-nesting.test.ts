/**
 * CEL the environment does not declare (bytes' json(), hex(), ...), and CEL nested past what the parser allows, as cel-go's parser limits it
 * (250 levels of operators, selections, calls on a value and indexes;
 * 100,000 code points), in every object that carries CEL: the write is
 * refused with 422 and cel-go's words, where a rule of two thousand `+`
 * used to run the thread out of stack and answer 500. A long chain of
 * `||`, which cel-go balances and accepts, is accepted and evaluates as
 * written. Nothing refused is stored, and the server keeps serving.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, type Reply, startServer, type TestClient } from './harness.js'
import { CRDS } from './crd-fixtures.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const RECURSION = 'compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded'
const WAIT_MS = 30_000

const causes = (res: Reply): { field: string; message: string }[] => res.body?.details?.causes ?? []

/** The expressions refused when written, with the message's tail each is refused with. */
const TOO_DEEP: { name: string; expression: string; issue: string }[] = [
  { name: 'two thousand additions', expression: `${Array(2001).fill('1').join(' + ')} > 0`, issue: RECURSION },
  { name: 'two thousand negations', expression: `${'!'.repeat(2000)}true`, issue: RECURSION },
  { name: 'twenty thousand negations', expression: `${'!'.repeat(20_000)}true`, issue: RECURSION },
  { name: 'a chain of 251 operators', expression: `${Array(251).fill('1').join(' + ')} > 0`, issue: RECURSION },
  {
    name: 'an expression of more than 100,000 code points',
    expression: `'${'a'.repeat(100_000)}' != ''`,
    issue: 'compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100008, limit 100000',
  },
]

/** `self.a == 'v0' || ... || self.a == 'v<n-1>'`. */
const disjunction = (subject: string, n: number): string => Array.from({ length: n }, (_, i) => `${subject} == 'v${i}'`).join(' || ')

function definition(plural: string, rule: string): Record<string, unknown> {
  const kind = `${plural[0]?.toUpperCase()}${plural.slice(1, -1)}`
  const spec = { type: 'object', properties: { a: { type: 'string', maxLength: 16 } }, 'x-kubernetes-validations': [{ rule, message: 'no match' }] }
  return {
    metadata: { name: `${plural}.nesting.example.com` },
    spec: {
      group: 'nesting.example.com',
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  }
}

describe('CEL nested too deep or too long when written', () => {
  let client: TestClient
  before(async () => {
    client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
  })

  TOO_DEEP.forEach(({ name, expression, issue }, i) => {
    it(`refuses a CRD rule of ${name} with 422 and cel-go's issue, stores nothing and stays ready`, async () => {
      const plural = `deeps${i}`
      const res = await client.post(CRDS, definition(plural, expression))
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.reason, 'Invalid')
      const [cause, ...others] = causes(res)
      assert.deepEqual(others, [])
      assert.equal(cause?.field, 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule')
      assert.ok(cause?.message.endsWith(`: ${issue}`), cause?.message.slice(-300))
      assert.equal((await client.get(`${CRDS}/${plural}.nesting.example.com`)).status, 404)
      assert.equal((await client.get('/readyz')).status, 200)
    })

    it(`refuses a ValidatingAdmissionPolicy and a webhook match condition of ${name} with 422, storing neither`, async () => {
      const policy = {
        metadata: { name: `deep-${i}` },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
          validations: [{ expression }],
        },
      }
      const written = await client.post(`${ADM}/validatingadmissionpolicies`, policy)
      assert.equal(written.status, 422, written.text)
      assert.deepEqual(
        causes(written).map((c) => [c.field, c.message.endsWith(`: ${issue}`)]),
        [['spec.validations[0].expression', true]],
      )
      assert.equal((await client.get(`${ADM}/validatingadmissionpolicies/deep-${i}`)).status, 404)

      const hook = {
        metadata: { name: `deep-${i}` },
        webhooks: [
          {
            name: 'deep.example.com',
            clientConfig: { url: 'https://127.0.0.1:1/deep' },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            matchConditions: [{ name: 'deep', expression }],
          },
        ],
      }
      const hooked = await client.post(`${ADM}/validatingwebhookconfigurations`, hook)
      assert.equal(hooked.status, 422, hooked.text)
      assert.deepEqual(
        causes(hooked).map((c) => [c.field, c.message.endsWith(`: ${issue}`)]),
        [['webhooks[0].matchConditions[0].expression', true]],
      )
      assert.equal((await client.get(`${ADM}/validatingwebhookconfigurations/deep-${i}`)).status, 404)
    })
  })

  it("refuses a CRD rule parsing the object's text as JSON with bytes' json(), which no Kubernetes environment declares, with cel-go's issue", async () => {
    const res = await client.post(CRDS, definition('parsers', "bytes(self.a).json().size() >= 0"))
    assert.equal(res.status, 422, res.text)
    const [cause, ...others] = causes(res)
    assert.deepEqual(others, [])
    assert.ok(cause?.message.includes(": compilation failed: ERROR: <input>:1:19: undeclared reference to 'json' (in container '')\n | "), cause?.message)
    assert.ok(cause?.message.endsWith(`\n | ${'.'.repeat(18)}^`), cause?.message)
    assert.equal((await client.get(`${CRDS}/parsers.nesting.example.com`)).status, 404)
  })

  it('accepts a CRD rule of 3,000 alternatives joined by ||, and evaluates it as written', async () => {
    const res = await client.post(CRDS, definition('chains', disjunction('self.a', 3000)))
    assert.equal(res.status, 201, res.text)
    const path = '/apis/nesting.example.com/v1/namespaces/default/chains'
    await eventually('chains are served', async () => (await client.get(path)).status === 200, WAIT_MS)

    const last = await client.post(path, { apiVersion: 'nesting.example.com/v1', kind: 'Chain', metadata: { name: 'last' }, spec: { a: 'v2999' } })
    assert.equal(last.status, 201, last.text)
    const first = await client.post(path, { apiVersion: 'nesting.example.com/v1', kind: 'Chain', metadata: { name: 'first' }, spec: { a: 'v0' } })
    assert.equal(first.status, 201, first.text)
    const none = await client.post(path, { apiVersion: 'nesting.example.com/v1', kind: 'Chain', metadata: { name: 'none' }, spec: { a: 'v3000' } })
    assert.equal(none.status, 422, none.text)
    assert.deepEqual(causes(none).map((c) => `${c.field}: ${c.message}`), ['spec: Invalid value: "object": no match'])
    assert.equal((await client.get(`${path}/none`)).status, 404)
  })

  it('denies with a policy of 2,500 alternatives joined by && as written, without an evaluation error', async () => {
    const ns = 'chained'
    assert.equal((await client.post('/api/v1/namespaces', { metadata: { name: ns, labels: { chained: 'yes' } } })).status, 201)
    const expression = Array.from({ length: 2500 }, (_, i) => `object.metadata.name != 'v${i}'`).join(' && ')
    const policy = {
      metadata: { name: 'chained' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { chained: 'yes' } },
        },
        validations: [{ expression, message: 'a reserved name' }],
      },
    }
    const created = await client.post(`${ADM}/validatingadmissionpolicies`, policy)
    assert.equal(created.status, 201, created.text.slice(-400))
    const binding = { metadata: { name: 'chained' }, spec: { policyName: 'chained', validationActions: ['Deny'] } }
    assert.equal((await client.post(`${ADM}/validatingadmissionpolicybindings`, binding)).status, 201)
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`
    await eventually('the policy acts', async () => (await client.post(`${configMaps}?dryRun=All`, { metadata: { name: 'v2499' } })).status === 422, WAIT_MS)

    const denied = await client.post(configMaps, { metadata: { name: 'v1500' } })
    assert.equal(denied.status, 422, denied.text)
    assert.equal(denied.body.message, `configmaps "v1500" is forbidden: ValidatingAdmissionPolicy 'chained' with binding 'chained' denied request: a reserved name`)
    assert.equal((await client.get(`${configMaps}/v1500`)).status, 404)
    assert.equal((await client.post(configMaps, { metadata: { name: 'free' } })).status, 201)
  })
})
