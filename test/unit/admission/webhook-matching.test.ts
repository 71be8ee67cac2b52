/**
 * Admission webhook matching and reviews: rules with stars, subresources and
 * scope; the review version negotiated; the answer checks upstream makes;
 * denials worded and coded as upstream's; match conditions deciding with
 * false before errors; a dry run refused for a webhook with side effects.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { webhookDenied } from '../../../core/admission/webhook/errors.js'
import { compileMatchConditions, conditionInput, evaluateMatchConditions } from '../../../core/admission/webhook/match-conditions.js'
import { validatingWebhookAdmission } from '../../../core/admission/webhook/validating.js'
import { admissionReview, negotiateReviewVersion, readAdmissionAnswer } from '../../../core/admission/webhook/review.js'
import { isExemptFromWebhooks, ruleMatches, type RuleTarget } from '../../../core/admission/webhook/rules.js'
import { webhooksOf } from '../../../core/admission/webhook/webhook.js'
import { StatusError } from '../../../core/machinery/status-error.js'

const pods: RuleTarget = { operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', namespace: 'default' }

describe('webhook rules', () => {
  const rule = (resources: string[], extra = {}) => ({ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources, ...extra })
  const cases: [string, ReturnType<typeof rule>, RuleTarget, boolean][] = [
    ['the resource by name', rule(['pods']), pods, true],
    ['a star for the resource, not its subresources', rule(['*']), { ...pods, subresource: 'status' }, false],
    ['star/status for any status', rule(['*/status']), { ...pods, operation: 'CREATE', subresource: 'status' }, true],
    ['pods/star for every pod subresource', rule(['pods/*']), { ...pods, subresource: 'eviction' }, true],
    ['star/star for everything', rule(['*/*']), { ...pods, subresource: 'binding' }, true],
    ['another operation', rule(['pods']), { ...pods, operation: 'DELETE' }, false],
    ['another group', rule(['pods']), { ...pods, group: 'apps' }, false],
    ['Namespaced scope and a namespaced object', rule(['pods'], { scope: 'Namespaced' }), pods, true],
    ['Cluster scope and a namespaced object', rule(['pods'], { scope: 'Cluster' }), pods, false],
    ['Cluster scope and a namespace, whose attributes carry its own name', rule(['namespaces'], { scope: 'Cluster' }), { ...pods, resource: 'namespaces', namespace: 'team-a' }, true],
    ['Namespaced scope and a namespace', rule(['namespaces'], { scope: 'Namespaced' }), { ...pods, resource: 'namespaces', namespace: 'team-a' }, false],
  ]
  for (const [what, r, target, expected] of cases) {
    it(`${expected ? 'matches' : 'does not match'} ${what}`, () => assert.equal(ruleMatches(r, target), expected))
  }

  it('exempts the admission configuration resources', () => {
    assert.equal(isExemptFromWebhooks('admissionregistration.k8s.io', 'validatingwebhookconfigurations'), true)
    assert.equal(isExemptFromWebhooks('admissionregistration.k8s.io', 'validatingadmissionpolicybindings'), true)
    assert.equal(isExemptFromWebhooks('', 'configmaps'), false)
  })
})

describe('AdmissionReview', () => {
  it('sends the first version the server speaks', () => {
    assert.equal(negotiateReviewVersion(['v2', 'v1beta1', 'v1']), 'v1beta1')
    assert.equal(negotiateReviewVersion(['v2']), undefined)
  })

  it('leaves empty fields out and always carries object, oldObject and options', () => {
    const kind = { group: '', version: 'v1', kind: 'Pod' }
    const resource = { group: '', version: 'v1', resource: 'pods' }
    const review = admissionReview('v1', {
      uid: 'u',
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      operation: 'DELETE',
      userInfo: { username: 'alice' },
      object: null,
      oldObject: { metadata: { name: 'p' } },
      dryRun: false,
      options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' },
    })
    assert.deepEqual(Object.keys(review['request'] as object), ['uid', 'kind', 'resource', 'requestKind', 'requestResource', 'operation', 'userInfo', 'object', 'oldObject', 'dryRun', 'options'])
    assert.equal(review['apiVersion'], 'admission.k8s.io/v1')
  })

  const v1 = (response: object) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', ...response } })
  const refusal = async (reply: unknown, version: 'v1' | 'v1beta1' = 'v1', mutating = true) => {
    try {
      await readAdmissionAnswer(reply, version, 'u', mutating)
    } catch (err) {
      return (err as Error).message
    }
    return 'accepted'
  }

  it('checks a v1 answer for its uid, kind and patch type as upstream does', async () => {
    assert.equal(await refusal({}), 'received invalid webhook response: webhook response was absent')
    assert.equal(await refusal(v1({ uid: 'other', allowed: true })), 'received invalid webhook response: expected response.uid="u", got "other"')
    assert.equal(
      await refusal({ ...v1({ allowed: true }), apiVersion: 'admission.k8s.io/v1beta1' }),
      'received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview',
    )
    assert.equal(await refusal(v1({ allowed: true, patch: 'W10=' })), 'received invalid webhook response: webhook returned response.patch but not response.patchType')
    assert.equal(await refusal(v1({ allowed: true, patchType: 'JSONPatch' })), 'received invalid webhook response: webhook returned response.patchType but not response.patch')
    assert.equal(await refusal(v1({ allowed: true, patch: 'W10=', patchType: 'JSONPatch' }), 'v1', false), 'received invalid webhook response: validating webhook may not return response.patch')
  })

  it('takes a v1beta1 answer without a uid, its patch as a JSON patch', async () => {
    const answer = await readAdmissionAnswer({ response: { allowed: true, patch: Buffer.from('[]').toString('base64') } }, 'v1beta1', 'u', true)
    assert.equal(answer.patchType, 'JSONPatch')
    assert.deepEqual(answer.patch, [])
  })
})

describe('webhook denials', () => {
  it('keeps the webhook code and reason and names the webhook', () => {
    const err = webhookDenied('x.example.com', { code: 422, reason: 'Invalid', message: 'bad' })
    assert.equal(err.code, 422)
    assert.equal(err.reason, 'Invalid')
    assert.equal(err.message, 'admission webhook "x.example.com" denied the request: bad')
  })
  it('raises a code below 400 to 400 and falls back to the reason', () => {
    const err = webhookDenied('x.example.com', { code: 200, reason: 'NotToday' })
    assert.equal(err.code, 400)
    assert.equal(err.message, 'admission webhook "x.example.com" denied the request: NotToday')
    assert.equal(webhookDenied('x.example.com', undefined).toStatus().reason, undefined)
  })
})

describe('match conditions', () => {
  const conditions = compileMatchConditions([
    { name: 'errs', expression: 'object.spec.missing == 1' },
    { name: 'false', expression: "object.metadata.name == 'other'" },
  ])
  const input = (name: string) => conditionInput({ metadata: { name }, spec: { replicas: 3 } }, undefined, { operation: 'CREATE' }, null)

  it('skips the webhook when one condition is false, even when another failed', async () => {
    assert.deepEqual(await evaluateMatchConditions(conditions, input('mine')), { matches: false, failedCondition: 'false' })
  })
  it('reports the failure when no condition is false', async () => {
    const outcome = await evaluateMatchConditions(conditions, input('other'))
    assert.ok('error' in outcome)
    assert.match(outcome.error, /^expression 'object\.spec\.missing == 1' resulted in error: /)
  })
  it('reads integers as CEL ints', async () => {
    const [replicas] = compileMatchConditions([{ name: 'r', expression: 'object.spec.replicas > 2' }])
    assert.deepEqual(await evaluateMatchConditions([replicas!], input('x')), { matches: true })
  })
})

describe('dry run and side effects', () => {
  it('refuses a dry run with 400 for a webhook whose side effects are Unknown, whatever its failure policy', async () => {
    const [hook] = webhooksOf(
      {
        metadata: { name: 'legacy' },
        webhooks: [
          {
            name: 'legacy.example.com',
            failurePolicy: 'Ignore',
            sideEffects: 'Unknown',
            admissionReviewVersions: ['v1'],
            clientConfig: { url: 'https://127.0.0.1:1/never' },
            rules: [{ operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
          },
        ],
      },
      'validating',
    )
    const posted: unknown[] = []
    const plugin = validatingWebhookAdmission({
      catalogue: { entries: [] } as never,
      stored: {} as never,
      authorizer: { authorize: async () => ({ decision: 'allow', reason: '' }) },
      index: { webhooks: () => [hook!], namespaceLabels: () => ({}), ready: Promise.resolve(), stop() {} },
      logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
      client: { post: async (_t, body) => void posted.push(body), get: async () => '' },
      resolveService: async () => '',
    })
    const entry = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', strategy: {} } as never
    await assert.rejects(
      Promise.resolve(plugin.validate({ operation: 'CREATE', entry, namespace: '', name: 'c', object: { metadata: { name: 'c' } }, dryRun: true, user: { username: 'u', groups: [] }, warnings: [] })),
      (err: unknown) => err instanceof StatusError && err.code === 400 && err.message === 'admission webhook "legacy.example.com" does not support dry run',
    )
    assert.equal(posted.length, 0)
  })
})
