/** admissionregistration.k8s.io through the API: webhook and policy defaults, refusals with upstream's causes, updates, delete. */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'

const BASE = '/apis/admissionregistration.k8s.io/v1'
const VALIDATING = `${BASE}/validatingwebhookconfigurations`
const MUTATING = `${BASE}/mutatingwebhookconfigurations`
const POLICIES = `${BASE}/validatingadmissionpolicies`
const BINDINGS = `${BASE}/validatingadmissionpolicybindings`

const causes = (body: { details: { causes: { field: string; message: string }[] } }): string[] =>
  body.details.causes.map((c) => `${c.field}: ${c.message}`)

const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }

function hook(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    clientConfig: { service: { namespace: 'default', name: 'hooks' } },
    rules: [rule],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  }
}

describe('admissionregistration.k8s.io through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('defaults a mutating webhook as upstream does, updates it, and deletes it', async () => {
    const created = await client.post(MUTATING, { metadata: { name: 'm' }, webhooks: [hook('pods.hooks.example.com')] })
    assert.equal(created.status, 201, created.text)
    const read = await client.get(`${MUTATING}/m`)
    assert.deepEqual(read.body.webhooks[0], {
      name: 'pods.hooks.example.com',
      clientConfig: { service: { namespace: 'default', name: 'hooks', port: 443 } },
      rules: [{ ...rule, scope: '*' }],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      sideEffects: 'None',
      timeoutSeconds: 10,
      admissionReviewVersions: ['v1'],
      reinvocationPolicy: 'Never',
    })
    read.body.webhooks[0].timeoutSeconds = 31
    const refused = await client.put(`${MUTATING}/m`, read.body)
    assert.deepEqual(causes(refused.body), ['webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'])
    read.body.webhooks[0].timeoutSeconds = 5
    const updated = await client.put(`${MUTATING}/m`, read.body)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.body.webhooks[0].timeoutSeconds, 5)
    assert.equal((await client.delete(`${MUTATING}/m`)).status, 200)
    assert.equal((await client.get(`${MUTATING}/m`)).status, 404)
  })

  it('refuses an invalid validating webhook configuration with every cause, and stores nothing', async () => {
    const res = await client.post(VALIDATING, {
      metadata: { name: 'bad' },
      webhooks: [
        hook('short.name', {
          clientConfig: { url: 'http://user@hooks.example.com/check?x=1' },
          rules: [{ operations: ['*', 'CREATE'], apiGroups: ['*', 'apps'], apiVersions: ['v1'], resources: ['*', 'pods'], scope: 'Everywhere' }],
          sideEffects: 'Some',
          admissionReviewVersions: ['v2'],
          matchConditions: [{ name: 'not-bool', expression: 'object.metadata.name' }, { name: 'not-bool', expression: 'request.usr == 1' }],
        }),
        hook('a.hooks.example.com', { clientConfig: {}, sideEffects: undefined }),
        hook('a.hooks.example.com'),
      ],
    })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'webhooks[0].name: Invalid value: "short.name": should be a domain with at least three segments separated by dots',
      'webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations',
      'webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups',
      'webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other resources without subresources',
      'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
      'webhooks[0].clientConfig.url: Invalid value: "user": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
      'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name": must evaluate to bool',
      `webhooks[0].matchConditions[1].expression: Invalid value: "request.usr == 1": compilation failed: ERROR: <input>:1:8: undefined field 'usr'\n | request.usr == 1\n | .......^`,
      'webhooks[0].matchConditions[1].name: Duplicate value: "not-bool"',
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
      'webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[1].clientConfig: Required value: exactly one of url or service is required',
      'webhooks[2].name: Duplicate value: "a.hooks.example.com"',
    ])
    assert.equal((await client.get(`${VALIDATING}/bad`)).status, 404)
  })

  it('refuses side effects and a duplicate name that an update would add', async () => {
    const created = await client.post(VALIDATING, { metadata: { name: 'v' }, webhooks: [hook('v.hooks.example.com')] })
    assert.equal(created.status, 201, created.text)
    const read = await client.get(`${VALIDATING}/v`)
    read.body.webhooks.push(hook('v.hooks.example.com', { sideEffects: 'Some' }))
    const refused = await client.put(`${VALIDATING}/v`, read.body)
    assert.deepEqual(causes(refused.body), [
      'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[1].name: Duplicate value: "v.hooks.example.com"',
    ])
    assert.equal((await client.delete(`${VALIDATING}/v`)).status, 200)
  })

  it('defaults a validating admission policy and its binding, and compiles their expressions', async () => {
    const policy = {
      metadata: { name: 'replicas' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
        validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'too many: ' + string(object.spec.replicas)" }],
      },
      status: { observedGeneration: 9 },
    }
    const created = await client.post(POLICIES, policy)
    assert.equal(created.status, 201, created.text)
    // The type-checking controller writes the policy's status just after the create; an update from an older read
    // would meet 409 Conflict before its validation, so read once that status is there.
    await eventually('the type check is written', async () => (await client.get(`${POLICIES}/replicas`)).body.status?.observedGeneration === 1)
    const read = await client.get(`${POLICIES}/replicas`)
    assert.equal(read.body.spec.failurePolicy, 'Fail')
    assert.deepEqual(read.body.spec.matchConstraints, {
      resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], scope: '*' }],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    })
    // What the client sent as status is dropped; the type-checking controller wrote its own.
    assert.notEqual(read.body.status?.observedGeneration, 9)
    assert.equal(read.body.metadata.generation, 1)
    read.body.spec.validations[0].expression = 'object.spec.replicas <'
    const broken = await client.put(`${POLICIES}/replicas`, read.body)
    assert.equal(broken.status, 422)
    assert.match(causes(broken.body)[0] ?? '', /^spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <": compilation failed: ERROR: <input>:1:\d+: /)

    const binding = await client.post(BINDINGS, {
      metadata: { name: 'replicas' },
      spec: { policyName: 'replicas', paramRef: { name: 'limits', namespace: 'default' }, validationActions: ['Deny'] },
    })
    assert.equal(binding.status, 201, binding.text)
    assert.equal((await client.get(`${BINDINGS}/replicas`)).body.spec.paramRef.parameterNotFoundAction, 'Deny')
    assert.equal((await client.delete(`${BINDINGS}/replicas`)).status, 200)
    assert.equal((await client.delete(`${POLICIES}/replicas`)).status, 200)
    assert.equal((await client.get(`${POLICIES}/replicas`)).status, 404)
  })

  it('refuses an invalid policy and binding with every cause, and stores neither', async () => {
    const policy = await client.post(POLICIES, {
      metadata: { name: 'bad' },
      spec: { failurePolicy: 'Maybe', validations: [{ expression: 'params.x', reason: 'Teapot' }] },
    })
    assert.deepEqual(causes(policy.body), [
      'spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'spec.matchConstraints: Required value',
      `spec.validations[0].expression: Invalid value: "params.x": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x\n | ^`,
      'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    ])
    assert.equal((await client.get(`${POLICIES}/bad`)).status, 404)
    const binding = await client.post(BINDINGS, { metadata: { name: 'bad' }, spec: { validationActions: ['Deny', 'Warn', 'Deny'] } })
    assert.deepEqual(causes(binding.body), [
      'spec.policyName: Required value',
      'spec.validationActions[2]: Duplicate value: "Deny"',
      'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ])
    assert.equal((await client.get(`${BINDINGS}/bad`)).status, 404)
  })
})
