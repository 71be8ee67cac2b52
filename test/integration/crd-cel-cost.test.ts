/**
 * The estimated cost of CRD rules, checked when the CRD is written: rules
 * whose worst case over unbounded lists, maps and strings is too costly are
 * refused with upstream's Forbidden causes and nothing is stored; the same
 * rules are accepted once maxItems, maxProperties and maxLength bound them,
 * and then run on the objects. The published CRDs upstream accepts are all
 * accepted; an admission policy is not held to a static estimate, as
 * upstream does not hold one (its inputs have no schema to size them by).
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, type Reply, startServer, type TestClient } from './harness.js'
import { realWorldManifests, WITHOUT_REAL_WORLD } from '../fixtures/real-world.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
const HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'
const TOTAL = `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${HINT}`

const causes = (res: Reply): string[] => res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)

/** `<plural>.stable.example.com`, whose spec has the one field `field` carrying `rule`. */
function definition(plural: string, field: Record<string, unknown>, rule: string): Record<string, unknown> {
  const kind = plural[0]?.toUpperCase() + plural.slice(1, -1)
  const spec = { type: 'object', properties: { field: { ...field, 'x-kubernetes-validations': [{ rule, message: 'rule failed' }] } } }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.stable.example.com` },
    spec: {
      group: 'stable.example.com',
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  }
}

const FIELD_RULE = 'spec.validation.openAPIV3Schema.properties[spec].properties[field].x-kubernetes-validations[0].rule'

const strings = { type: 'array', items: { type: 'string' } }
const boundedStrings = { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 } }
const labels = { type: 'object', additionalProperties: { type: 'string' } }
const boundedLabels = { type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 63 } }

describe('CRD rules held to their estimated cost', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  const classics: { name: string; plural: string; rule: string; unbounded: Record<string, unknown>; bounded: Record<string, unknown> }[] = [
    { name: 'a pair of loops over a list of strings', plural: 'pairs', rule: 'self.all(x, self.all(y, x == y))', unbounded: strings, bounded: boundedStrings },
    { name: 'nested exists over a map', plural: 'lookups', rule: 'self.exists(k, self.exists(j, self[j] == self[k] && j != k))', unbounded: labels, bounded: boundedLabels },
    { name: 'string concatenation in a loop', plural: 'domains', rule: "self.all(x, (x + '.example.com').size() <= 253)", unbounded: strings, bounded: boundedStrings },
  ]
  for (const c of classics) {
    it(`refuses ${c.name} without bounds, with 422 naming the rule, and stores nothing`, async () => {
      const res = await client.post(CRDS, definition(c.plural, c.unbounded, c.rule))
      assert.equal(res.status, 422, res.text)
      assert.equal(res.body.reason, 'Invalid')
      assert.deepEqual(causes(res), [
        `${FIELD_RULE}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}`,
        `${FIELD_RULE}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
        TOTAL,
      ])
      assert.ok(res.body.message.startsWith(`CustomResourceDefinition.apiextensions.k8s.io "${c.plural}.stable.example.com" is invalid: [`), res.body.message)
      assert.equal((await client.get(`${CRDS}/${c.plural}.stable.example.com`)).status, 404)
    })

    it(`accepts ${c.name} once maxItems, maxProperties and maxLength bound it`, async () => {
      const res = await client.post(CRDS, definition(c.plural, c.bounded, c.rule))
      assert.equal(res.status, 201, res.text)
    })
  }

  it('runs an accepted rule on the objects', async () => {
    const pairs = '/apis/stable.example.com/v1/namespaces/default/pairs'
    await eventually('pairs are served', async () => (await client.get(pairs)).status === 200)
    const same = await client.post(pairs, { apiVersion: 'stable.example.com/v1', kind: 'Pair', metadata: { name: 'same' }, spec: { field: ['a', 'a'] } })
    assert.equal(same.status, 201, same.text)
    const mixed = await client.post(pairs, { apiVersion: 'stable.example.com/v1', kind: 'Pair', metadata: { name: 'mixed' }, spec: { field: ['a', 'b'] } })
    assert.equal(mixed.status, 422, mixed.text)
    assert.deepEqual(causes(mixed), ['spec.field: Invalid value: "array": rule failed'])
    assert.equal((await client.get(`${pairs}/mixed`)).status, 404)
  })

  it('refuses an update that makes a stored rule too costly, and keeps the stored CRD', async () => {
    const name = `${CRDS}/domains.stable.example.com`
    const stored = (await client.get(name)).body
    const loosened = structuredClone(stored)
    delete loosened.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.field.maxItems
    const res = await client.put(name, loosened)
    assert.equal(res.status, 422, res.text)
    // 1,048,575 strings of up to 256 bytes fit in a request: 33 each at most, about 34.6 million.
    assert.equal(causes(res)[0], `${FIELD_RULE}: Forbidden: estimated rule cost exceeds budget by factor of 3.5x ${HINT}`)
    const after = (await client.get(name)).body
    assert.equal(after.metadata.resourceVersion, stored.metadata.resourceVersion)
    assert.equal(after.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.field.maxItems, 16)
  })
})

describe('published manifests under the cost limits', { skip: WITHOUT_REAL_WORLD }, () => {
  const PATHS: Record<string, string> = {
    CustomResourceDefinition: CRDS,
    ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  }
  const groups = new Map<string, Record<string, unknown>[]>()
  for (const { file, object } of realWorldManifests()) {
    if (!PATHS[String(object['kind'])]) continue
    // The standard and experimental channels define the same CRDs: each goes to a server of its own.
    const channel = file.split('/').slice(0, -1).join('/')
    groups.set(channel, [...(groups.get(channel) ?? []), object])
  }

  it('finds the published CRDs', () => assert.ok(groups.size >= 3, [...groups.keys()].join(', ')))

  for (const [channel, objects] of groups) {
    it(`accepts every CRD and policy of ${channel}`, async () => {
      const client = await startServer()
      const refused: string[] = []
      for (const object of objects) {
        const res = await client.post(PATHS[String(object['kind'])] ?? '', object)
        if (res.status !== 201) refused.push(`${String(object['kind'])} ${String((object['metadata'] as { name?: string }).name)}: ${res.status} ${res.text}`)
      }
      assert.deepEqual(refused, [])
    })
  }
})

describe('admission policies and the estimated cost', () => {
  it('accepts a policy whose loops over the object are unbounded, as upstream does', async () => {
    const client = await startServer()
    const policy = {
      metadata: { name: 'unique-ports' },
      spec: {
        matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
        validations: [{ expression: 'object.spec.containers.all(c, object.spec.containers.all(d, c == d || c.name != d.name))' }],
      },
    }
    const res = await client.post('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', policy)
    assert.equal(res.status, 201, res.text)
  })
})
