/**
 * Admission policy expressions: message construction written as maps,
 * variables evaluated lazily and only from earlier ones, the authorizer
 * library asking the server's authorizer, the cost limit per call, and
 * request matching by rules, selectors and equivalent versions.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AdmissionAttributes } from '../../../core/admission/attributes.js'
import { authorizerFor } from '../../../core/admission/policy/cel-environment.js'
import { fromCel, toCel } from '../../../core/admission/policy/cel-values.js'
import { ExpressionError, PolicyEvaluation } from '../../../core/admission/policy/evaluation.js'
import { matchRequest } from '../../../core/admission/policy/matching.js'
import { messagesAsMaps } from '../../../core/admission/policy/object-literals.js'
import type { Authorizer } from '../../../core/authz/authorizer.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'

const user = { username: 'ann', uid: '', groups: ['devs'], extra: {} }

function evaluation(object: unknown, variables: { name: string; expression: string }[] = [], authorizer?: Authorizer) {
  const budget = { valuesLeft: 100_000 }
  const activation: Record<string, unknown> = { object: toCel(object, budget), oldObject: null, params: null, namespaceObject: null, request: toCel({ operation: 'CREATE', name: 'x', namespace: 'ns', uid: '', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, subResource: '', requestKind: { group: '', version: 'v1', kind: 'ConfigMap' }, requestResource: { group: '', version: 'v1', resource: 'configmaps' }, requestSubResource: '', userInfo: user, dryRun: false, options: null }, budget) }
  if (authorizer) activation['authorizer'] = authorizerFor(authorizer, user, { group: '', version: 'v1', resource: 'configmaps', subresource: '', namespace: 'ns', name: 'x' })
  return new PolicyEvaluation(activation, 100_000 - budget.valuesLeft, variables)
}

describe('admission policy expressions', () => {
  it('writes message construction as map literals, leaving strings alone', () => {
    assert.equal(messagesAsMaps('Object{spec: Object.spec{replicas: 3}}'), '{"spec": dyn( {"replicas": dyn( 3)})}')
    assert.equal(messagesAsMaps('x in {"a": "T{b: c}"}'), 'x in {"a": "T{b: c}"}')
  })

  it('writes a bytes result as base64 however long it is (a JSON patch value of a large ConfigMap)', () => {
    const bytes = new Uint8Array(300_000).map((_, i) => i % 251)
    assert.equal(fromCel(bytes), Buffer.from(bytes).toString('base64'))
    assert.deepEqual(fromCel({ binaryData: bytes }), { binaryData: Buffer.from(bytes).toString('base64') })
  })

  it('evaluates integers as CEL ints and variables lazily, each from the ones before it', async () => {
    const e = evaluation({ spec: { replicas: 3 } }, [
      { name: 'broken', expression: 'object.missing.field' },
      { name: 'replicas', expression: 'object.spec.replicas' },
      { name: 'double', expression: 'variables.replicas * 2' },
    ])
    assert.equal(await e.evaluate('variables.double == 6'), true)
    await assert.rejects(e.evaluate('variables.broken == 1'), (err: unknown) => err instanceof ExpressionError && /resulted in error/.test(err.message))
  })

  it('asks the server authorizer through the authorizer library, once per distinct check', async () => {
    const asked: string[] = []
    const authorizer: Authorizer = {
      authorize: async (attrs) => {
        asked.push(`${attrs.user.username} ${attrs.verb} ${attrs.resource} ${attrs.namespace}`)
        return { decision: attrs.verb === 'delete' ? 'allow' : 'no-opinion', reason: 'test' }
      },
    }
    const e = evaluation({}, [], authorizer)
    assert.equal(await e.evaluate("authorizer.group('').resource('pods').namespace('ns').check('delete').allowed()"), true)
    assert.equal(await e.evaluate("authorizer.requestResource.check('update').allowed() || authorizer.requestResource.check('update').allowed()"), false)
    assert.deepEqual(asked, ['ann delete pods ns', 'ann update configmaps ns'])
  })

  it('cancels a call whose actual cost passes the per-call limit while it runs', async () => {
    const items = Array.from({ length: 2000 }, (_, i) => i)
    const e = evaluation({ items })
    await assert.rejects(e.evaluate('object.items.all(a, object.items.all(b, a + b >= 0))'), /actual cost limit exceeded/)
  })
})

describe('admission policy matching', () => {
  const catalogue = new Catalogue([configMaps])
  const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
    operation: 'CREATE',
    entry: configMaps,
    namespace: 'ns',
    name: 'cm',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', labels: { tier: 'web' } } },
    dryRun: false,
    user,
    warnings: [],
    ...over,
  })
  const ctx = { catalogue, namespace: (name: string) => (name === 'ns' ? { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { env: 'prod' } } } : undefined) }
  const rule = { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }

  it('matches by rule, operation, scope, resource names and the excluded rules', () => {
    assert.deepEqual(matchRequest({ resourceRules: [rule] }, attrs(), ctx), {
      matches: true,
      as: { entry: configMaps, resource: { group: '', version: 'v1', resource: 'configmaps' }, kind: { group: '', version: 'v1', kind: 'ConfigMap' } },
    })
    assert.deepEqual(matchRequest({ resourceRules: [rule] }, attrs({ operation: 'UPDATE' }), ctx), { matches: false })
    assert.deepEqual(matchRequest({ resourceRules: [{ ...rule, scope: 'Cluster' }] }, attrs(), ctx), { matches: false })
    assert.deepEqual(matchRequest({ resourceRules: [{ ...rule, resourceNames: ['other'] }] }, attrs(), ctx), { matches: false })
    assert.deepEqual(matchRequest({ resourceRules: [rule], excludeResourceRules: [rule] }, attrs(), ctx), { matches: false })
    // As upstream's rule matcher (its "r & subresources" case): `configmaps/*` covers config maps themselves too.
    assert.equal((matchRequest({ resourceRules: [{ ...rule, resources: ['configmaps/*'] }] }, attrs(), ctx) as { matches: boolean }).matches, true)
    assert.deepEqual(matchRequest({ resourceRules: [{ ...rule, resources: ['*/status'] }] }, attrs(), ctx), { matches: false })
  })

  it('matches namespace and object selectors, and reports a namespace that does not exist', () => {
    const prod = { resourceRules: [rule], namespaceSelector: { matchLabels: { env: 'prod' } } }
    const outcome = matchRequest(prod, attrs(), ctx)
    assert.equal('matches' in outcome && outcome.matches, true)
    assert.deepEqual(matchRequest({ ...prod, objectSelector: { matchLabels: { tier: 'db' } } }, attrs(), ctx), { matches: false })
    assert.deepEqual(matchRequest(prod, attrs({ namespace: 'gone' }), ctx), { error: 'namespaces "gone" not found' })
  })
})
