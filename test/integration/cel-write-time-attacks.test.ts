/**
 * Costly CEL written into the objects that hold it, and what the write
 * answers. Upstream estimates the cost of CRD rules when the CRD is written
 * (apiextensions validation) and refuses those over its limits; the CEL of
 * admission policies and webhook match conditions it compiles without any
 * estimate (apiserver admission/plugin/cel/compile.go), leaving them to the
 * cost limit of each evaluation. So each attack below is refused here
 * exactly where upstream's estimate refuses it:
 *
 * - `cel.bind` doubling a list 26 times: joining lists costs one unit
 *   whatever their size, so the estimate stays small and upstream accepts
 *   the CRD (the run-time limit is what stops it);
 * - three loops nested over an unbounded list: refused in a CRD;
 * - `cel.bind` doubling a string 26 times: each join reads both strings,
 *   the estimate overflows, refused in a CRD;
 * - policies' variables doubling a list 26 times: no estimate upstream.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { type Reply, startServer, type TestClient } from './harness.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
const ADM = '/apis/admissionregistration.k8s.io/v1'
const HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'
const FIELD_RULE = 'spec.validation.openAPIV3Schema.properties[spec].properties[field].x-kubernetes-validations[0].rule'

const causes = (res: Reply): string[] => res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)

/** `cel.bind(a1, base + base, cel.bind(a2, a1 + a1, ... size(a26) > 0))`: a value doubled `steps` times. */
function bindDoubling(base: string, steps = 26): string {
  let body = `size(a${steps}) > 0`
  for (let n = steps; n >= 1; n--) body = `cel.bind(a${n}, ${n === 1 ? `${base} + ${base}` : `a${n - 1} + a${n - 1}`}, ${body})`
  return body
}

const EIGHT = '[0, 1, 2, 3, 4, 5, 6, 7]'

/** The attacks as they read in a policy or a match condition, over `object` (a ConfigMap or a Pod). */
const POLICY_ATTACKS: Record<string, string> = {
  'a list doubled 26 times by cel.bind': bindDoubling(EIGHT),
  'three loops nested over an unbounded list': 'object.spec.containers.all(x, object.spec.containers.all(y, object.spec.containers.all(z, x.name == y.name || y.name != z.name)))',
  'a string doubled 26 times by cel.bind': bindDoubling('object.metadata.name'),
}

/** `<plural>.attacks.example.com`, whose spec has the one field `field` carrying `rule`. */
function definition(plural: string, field: Record<string, unknown>, rule: string): Record<string, unknown> {
  const kind = plural[0]?.toUpperCase() + plural.slice(1, -1)
  const spec = { type: 'object', properties: { field: { ...field, 'x-kubernetes-validations': [{ rule }] } } }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.attacks.example.com` },
    spec: {
      group: 'attacks.example.com',
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  }
}

describe('costly CRD rules when the CRD is written', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('accepts a list of at most 8 doubled 26 times by cel.bind, whose estimate upstream keeps small (201)', async () => {
    const res = await client.post(CRDS, definition('binds', { type: 'array', maxItems: 8, items: { type: 'integer' } }, bindDoubling('self')))
    assert.equal(res.status, 201, res.text)
  })

  const refused: { name: string; plural: string; field: Record<string, unknown>; rule: string }[] = [
    {
      name: 'three loops nested over an unbounded list',
      plural: 'triples',
      field: { type: 'array', items: { type: 'string' } },
      rule: 'self.all(x, self.all(y, self.all(z, x == y || y != z)))',
    },
    { name: 'a string of no maxLength doubled 26 times by cel.bind', plural: 'repeats', field: { type: 'string' }, rule: bindDoubling('self') },
  ]
  for (const c of refused) {
    it(`refuses ${c.name} with 422, upstream's causes at the rule's path, and stores nothing`, async () => {
      const res = await client.post(CRDS, definition(c.plural, c.field, c.rule))
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.reason, 'Invalid')
      assert.deepEqual(causes(res), [
        `${FIELD_RULE}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}`,
        `${FIELD_RULE}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
        `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${HINT}`,
      ])
      assert.equal((await client.get(`${CRDS}/${c.plural}.attacks.example.com`)).status, 404)
    })
  }

  it('accepts a port rule on the values of a map of at most 128 in a list of at most 4096 (201)', async () => {
    const ports = {
      type: 'object',
      maxProperties: 128,
      additionalProperties: { type: 'integer', minimum: 0, maximum: 4294967295, 'x-kubernetes-validations': [{ rule: '0 < self && self <= 65535', message: 'port must be between 1-65535' }] },
    }
    const crd = definition('endpoints', { type: 'array', maxItems: 4096, items: { type: 'object', properties: { ports } } }, 'size(self) >= 0')
    const res = await client.post(CRDS, crd)
    assert.equal(res.status, 201, res.text)
  })

  it('accepts a rule looping over a conditional list beside those endpoints, sized as upstream sizes it (201)', async () => {
    // A widely installed service entry's spec: the loop's variable has no path of its own, and upstream
    // reads its size from the rule's root (an object, of no size), so the rule costs 1309, not "more than 100x".
    const crd = definition(
      'entries',
      {
        type: 'object',
        properties: {
          addresses: { type: 'array', maxItems: 256, items: { type: 'string', maxLength: 64 } },
          resolution: { type: 'string', enum: ['NONE', 'STATIC', 'DNS', 'DNS_ROUND_ROBIN', 'DYNAMIC_DNS'] },
        },
      },
      '!((has(self.addresses) ? self.addresses : []).exists(k, k.contains("/")) && !((has(self.resolution) ? self.resolution : "NONE") in ["STATIC", "NONE"]))',
    )
    const res = await client.post(CRDS, crd)
    assert.equal(res.status, 201, res.text)
    assert.equal((await client.get(`${CRDS}/entries.attacks.example.com`)).status, 200)
  })
})

const CONSTRAINTS = { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }

/** Variables a0 (eight numbers) to a26, each the one before joined to itself. */
const DOUBLING_VARIABLES = [
  { name: 'a0', expression: EIGHT },
  ...Array.from({ length: 26 }, (_, i) => ({ name: `a${i + 1}`, expression: `variables.a${i} + variables.a${i}` })),
]

describe('costly CEL in admission policies and webhook match conditions when written', () => {
  let client: TestClient
  before(async () => {
    client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy', 'MutatingAdmissionPolicy'], mutatingAdmissionPolicy: true } })
  })

  /** Creates the object and checks it is stored as sent: upstream makes no estimate here to refuse it by. */
  async function accepted(path: string, object: Record<string, unknown>): Promise<void> {
    const res = await client.post(path, object)
    assert.equal(res.status, 201, res.text)
    const name = (object['metadata'] as { name: string }).name
    assert.equal((await client.get(`${path}/${name}`)).status, 200)
  }

  let n = 0
  for (const [attack, expression] of Object.entries(POLICY_ATTACKS)) {
    const id = ++n
    it(`accepts ${attack} in a ValidatingAdmissionPolicy's validation, variable, matchCondition, messageExpression and auditAnnotation`, async () => {
      await accepted(`${ADM}/validatingadmissionpolicies`, {
        metadata: { name: `attack-${id}` },
        spec: {
          matchConstraints: CONSTRAINTS,
          matchConditions: [{ name: 'attack', expression }],
          variables: [{ name: 'attack', expression }],
          validations: [{ expression, messageExpression: `${expression} ? 'yes' : 'no'` }],
          auditAnnotations: [{ key: 'attack', valueExpression: `${expression} ? 'yes' : 'no'` }],
        },
      })
    })

    it(`accepts ${attack} in a MutatingAdmissionPolicy's matchCondition, variable and mutation`, async () => {
      await accepted(`${ADM}/mutatingadmissionpolicies`, {
        metadata: { name: `attack-${id}` },
        spec: {
          matchConstraints: CONSTRAINTS,
          matchConditions: [{ name: 'attack', expression }],
          variables: [{ name: 'attack', expression }],
          reinvocationPolicy: 'Never',
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: `${expression} ? [] : []` } }],
        },
      })
    })

    for (const kind of ['validating', 'mutating'] as const) {
      it(`accepts ${attack} in a ${kind} webhook's matchCondition`, async () => {
        await accepted(`${ADM}/${kind}webhookconfigurations`, {
          metadata: { name: `attack-${id}` },
          webhooks: [
            {
              name: 'attack.example.com',
              clientConfig: { url: 'https://127.0.0.1:1/attack' },
              rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              matchConditions: [{ name: 'attack', expression }],
            },
          ],
        })
      })
    }
  }

  it('accepts policies whose variables double a list 26 times', async () => {
    await accepted(`${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'doubling-variables' },
      spec: { matchConstraints: CONSTRAINTS, variables: DOUBLING_VARIABLES, validations: [{ expression: 'size(variables.a26) > 0' }] },
    })
    await accepted(`${ADM}/mutatingadmissionpolicies`, {
      metadata: { name: 'doubling-variables' },
      spec: {
        matchConstraints: CONSTRAINTS,
        variables: DOUBLING_VARIABLES,
        reinvocationPolicy: 'Never',
        mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: 'size(variables.a26) > 0 ? [] : []' } }],
      },
    })
  })
})
