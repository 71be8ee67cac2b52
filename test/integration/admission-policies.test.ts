/**
 * ValidatingAdmissionPolicy and MutatingAdmissionPolicy through
 * createApiServer: refusals with upstream's status, reason and message and
 * nothing stored; Warn and Audit; parameters cluster-wide and per namespace
 * with both not-found actions; variables and message expressions; binding
 * selectors; mutations visible on the stored object; a policy changed while
 * the server runs; the type check in the policy's status; and the Gateway
 * API's published policy.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { REAL_WORLD_DIR, WITHOUT_REAL_WORLD } from '../fixtures/real-world.js'
import { eventually, startServer, type TestClient } from './harness.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const WAIT_MS = 60_000

const configMap = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
})

function policy(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
      ...spec,
    },
  }
}

function binding(name: string, policyName: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions: ['Deny'], ...spec },
  }
}

async function created(client: TestClient, path: string, body: unknown): Promise<any> {
  const res = await client.post(path, body)
  assert.equal(res.status, 201, res.text)
  return res.body
}

async function namespace(client: TestClient, name: string, labels: Record<string, string> = {}): Promise<void> {
  await created(client, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } })
}

/** Waits until a dry-run create of `probe` in `ns` is answered with `status`: the policy's watch event has arrived. */
async function untilAnswered(client: TestClient, ns: string, probe: unknown, status: number): Promise<void> {
  await eventually(`a probe in ${ns} is answered ${status}`, async () => (await client.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, probe)).status === status, WAIT_MS)
}

describe('ValidatingAdmissionPolicy', () => {
  it('denies with the failed expression, the policy and binding named, 422 Invalid, and stores nothing', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('max-keys', { validations: [{ expression: '!has(object.data) || size(object.data) <= 2' }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('max-keys-binding', 'max-keys'))
    const big = configMap('big', { a: '1', b: '2', c: '3' })
    await untilAnswered(client, 'default', big, 422)

    const res = await client.post('/api/v1/namespaces/default/configmaps', big)
    assert.equal(res.status, 422)
    assert.equal(res.body.reason, 'Invalid')
    assert.equal(
      res.body.message,
      `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: failed expression: !has(object.data) || size(object.data) <= 2`,
    )
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/big')).status, 404)
    assert.equal((await client.post('/api/v1/namespaces/default/configmaps', configMap('small', { a: '1' }))).status, 201)
  })

  it('matches `configmaps/*` as upstream matches rules: the resource itself and each of its subresources', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    const rules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps/*'] }]
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('no-x-anywhere', { matchConstraints: { resourceRules: rules }, validations: [{ expression: "!has(object.data) || !('x' in object.data)" }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('no-x-anywhere-binding', 'no-x-anywhere'))
    // Before, `configmaps/*` matched subresources alone: a policy written for every write of config maps let all of them in.
    await untilAnswered(client, 'default', configMap('probe', { x: '1' }), 422)
    const res = await client.post('/api/v1/namespaces/default/configmaps', configMap('with-x', { x: '1' }))
    assert.equal(res.status, 422, res.text)
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'no-x-anywhere' with binding 'no-x-anywhere-binding' denied request/)
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/with-x')).status, 404)
  })

  it('leaves the reviews alone, as upstream excludes them from policies, while a policy for every resource denies the rest', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    const rules = [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }]
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('deny-creates', { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'false' }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('deny-creates-binding', 'deny-creates'))
    await untilAnswered(client, 'default', configMap('probe'), 422)
    const reviews: Array<[string, unknown]> = [
      ['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } }],
      ['/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } }],
      ['/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'someone', resourceAttributes: { verb: 'get', resource: 'pods' } } }],
      ['/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'default' }, spec: { user: 'someone', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } } }],
      ['/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }],
      ['/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } }],
    ]
    for (const [path, body] of reviews) {
      const res = await client.post(path, body)
      assert.equal(res.status, 201, `${path}: ${res.text}`)
    }
    const denied = await client.post('/api/v1/namespaces/default/configmaps', configMap('denied'))
    assert.equal(denied.status, 422, denied.text)
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/denied')).status, 404)
  })

  it('sees the object as Go encodes it: an empty map sent is not there', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    // configMap() sends `labels: {}`, which upstream's decoded struct leaves out (a map with omitempty).
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('go-form', { validations: [{ expression: '!has(object.metadata.labels)' }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('go-form-binding', 'go-form'))
    const labelled = configMap('labelled', {}, { a: 'b' })
    await untilAnswered(client, 'default', labelled, 422)
    assert.equal((await client.post('/api/v1/namespaces/default/configmaps', configMap('unlabelled'))).status, 201)
    assert.equal((await client.post('/api/v1/namespaces/default/configmaps', labelled)).status, 422)
  })

  it('words the refusal with message, messageExpression and variables, and takes the reason for its status code', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await created(
      client,
      `${ADM}/validatingadmissionpolicies`,
      policy('owner-label', {
        variables: [
          { name: 'labels', expression: 'has(object.metadata.labels) ? object.metadata.labels : {}' },
          { name: 'owner', expression: "'owner' in variables.labels ? variables.labels['owner'] : ''" },
        ],
        validations: [
          { expression: "variables.owner != ''", message: 'every config map needs an owner', reason: 'Forbidden' },
          { expression: "variables.owner != 'nobody'", messageExpression: "'owner ' + variables.owner + ' is not a person'" },
        ],
      }),
    )
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('owner-label-binding', 'owner-label'))
    await untilAnswered(client, 'default', configMap('probe'), 403)

    const unowned = await client.post('/api/v1/namespaces/default/configmaps', configMap('unowned'))
    assert.equal(unowned.status, 403)
    assert.equal(unowned.body.reason, 'Forbidden')
    assert.match(unowned.body.message, /denied request: every config map needs an owner$/)
    const nobody = await client.post('/api/v1/namespaces/default/configmaps', configMap('nobody', {}, { owner: 'nobody' }))
    assert.equal(nobody.status, 422)
    assert.match(nobody.body.message, /with binding 'owner-label-binding' denied request: owner nobody is not a person$/)
    assert.equal((await client.get('/api/v1/namespaces/default/configmaps/nobody')).status, 404)
    assert.equal((await client.post('/api/v1/namespaces/default/configmaps', configMap('owned', {}, { owner: 'ann' }))).status, 201)
  })

  /**
   * Upstream's conformance spec "ValidatingAdmissionPolicy should allow
   * expressions to refer variables." (test/e2e/apimachinery/validatingadmissionpolicy.go):
   * a validation that is a variable alone must evaluate to bool, which it
   * does because each variable is typed as its expression; it was refused as
   * dyn, and the spec's policy could not be created.
   */
  it('types each variable as its expression, so a validation may be a variable alone (the conformance spec on variables)', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await namespace(client, 'vars', { vars: 'true' })
    const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }]
    await created(
      client,
      `${ADM}/validatingadmissionpolicies`,
      policy('odd-replicas', {
        matchConstraints: { namespaceSelector: { matchLabels: { vars: 'true' } }, resourceRules: rules },
        variables: [
          { name: 'replicas', expression: 'object.spec.replicas' },
          { name: 'oddReplicas', expression: 'variables.replicas % 2 == 1' },
        ],
        validations: [{ expression: 'variables.replicas > 1' }, { expression: 'variables.oddReplicas' }],
      }),
    )
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('odd-replicas-binding', 'odd-replicas', { matchResources: { namespaceSelector: { matchLabels: { vars: 'true' } } } }))
    const deployment = (name: string, replicas: number) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, labels: { app: 'nginx' } },
      spec: { replicas, selector: { matchLabels: { app: 'nginx' } }, template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] } } },
    })
    await eventually('the policy denies one replica', async () => (await client.post('/apis/apps/v1/namespaces/vars/deployments?dryRun=All', deployment('marker', 1))).status === 422, WAIT_MS)
    const single = await client.post('/apis/apps/v1/namespaces/vars/deployments', deployment('single', 1))
    assert.equal(single.body.reason, 'Invalid', single.text)
    assert.match(single.body.message, /denied request: failed expression: variables.replicas > 1$/)
    const even = await client.post('/apis/apps/v1/namespaces/vars/deployments', deployment('even', 2))
    assert.match(even.body.message, /denied request: failed expression: variables.oddReplicas$/)
    assert.equal((await client.post('/apis/apps/v1/namespaces/vars/deployments', deployment('replicated', 3))).status, 201)
    const replicaSet = { ...deployment('non-replicated', 1), kind: 'ReplicaSet' }
    assert.equal((await client.post('/apis/apps/v1/namespaces/vars/replicasets', replicaSet)).status, 201)

    // A variable names only the ones declared before it, and a result still has to be a bool.
    const refused = await client.post(
      `${ADM}/validatingadmissionpolicies`,
      policy('misordered', {
        variables: [
          { name: 'first', expression: 'variables.second' },
          { name: 'second', expression: "'text'" },
        ],
        validations: [{ expression: 'variables.second' }],
      }),
    )
    assert.equal(refused.status, 422, refused.text)
    const causes = refused.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)
    assert.equal(causes.length, 2, refused.text)
    assert.equal(causes[0], `spec.variables[0].expression: Invalid value: "variables.second": compilation failed: ERROR: <input>:1:10: undefined field 'second'\n | variables.second\n | .........^`)
    assert.equal(causes[1], 'spec.validations[0].expression: Invalid value: "variables.second": must evaluate to bool')
    assert.equal((await client.get(`${ADM}/validatingadmissionpolicies/misordered`)).status, 404)
  })

  it('Warn admits with a Warning header in upstream words; Audit admits without one', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('no-x', { validations: [{ expression: "!has(object.data) || !('x' in object.data)", message: 'x is deprecated' }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('no-x-warn', 'no-x', { validationActions: ['Warn', 'Audit'] }))
    const expected = `299 - "Validation failed for ValidatingAdmissionPolicy 'no-x' with binding 'no-x-warn': x is deprecated"`
    await eventually('the warning appears', async () => (await client.post('/api/v1/namespaces/default/configmaps?dryRun=All', configMap('p', { x: '1' }))).headers.get('warning') === expected, WAIT_MS)
    const res = await client.post('/api/v1/namespaces/default/configmaps', configMap('with-x', { x: '1' }))
    assert.equal(res.status, 201)
    assert.equal(res.headers.get('warning'), expected)

    await created(client, `${ADM}/validatingadmissionpolicies`, policy('no-y', { validations: [{ expression: "!has(object.data) || !('y' in object.data)" }] }))
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('no-y-audit', 'no-y', { validationActions: ['Audit'] }))
    const audited = await client.post('/api/v1/namespaces/default/configmaps', configMap('with-y', { y: '1' }))
    assert.equal(audited.status, 201)
    assert.equal(audited.headers.get('warning'), null)
  })

  it('reads parameters per namespace, with Deny and Allow when none is found, and cluster-wide ones', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    for (const ns of ['team-a', 'team-b']) await namespace(client, ns)
    await created(client, '/api/v1/namespaces/team-a/configmaps', configMap('limits', { maxKeys: '1' }))
    await created(
      client,
      `${ADM}/validatingadmissionpolicies`,
      policy('per-namespace-limit', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { checked: 'yes' } },
        },
        validations: [{ expression: '!has(object.data) || size(object.data) <= int(params.data.maxKeys)', messageExpression: "'at most ' + params.data.maxKeys + ' keys'" }],
      }),
    )
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('per-namespace-limit', 'per-namespace-limit', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } }))
    const two = configMap('two', { a: '1', b: '2' }, { checked: 'yes' })
    await untilAnswered(client, 'team-a', two, 422)

    const a = await client.post('/api/v1/namespaces/team-a/configmaps', two)
    assert.match(a.body.message, /denied request: at most 1 keys$/)
    const b = await client.post('/api/v1/namespaces/team-b/configmaps', two)
    assert.equal(b.status, 403)
    assert.equal(
      b.body.message,
      "configmaps \"two\" is forbidden: ValidatingAdmissionPolicy 'per-namespace-limit' with binding 'per-namespace-limit' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    )
    assert.equal((await client.get('/api/v1/namespaces/team-b/configmaps/two')).status, 404)

    const updated = (await client.get(`${ADM}/validatingadmissionpolicybindings/per-namespace-limit`)).body
    updated.spec.paramRef.parameterNotFoundAction = 'Allow'
    assert.equal((await client.put(`${ADM}/validatingadmissionpolicybindings/per-namespace-limit`, updated)).status, 200)
    await untilAnswered(client, 'team-b', two, 201)
    assert.equal((await client.post('/api/v1/namespaces/team-b/configmaps', two)).status, 201)

    // A cluster-scoped parameter: a PriorityClass's value bounds the keys.
    await created(client, '/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'key-budget' }, value: 2 })
    await created(
      client,
      `${ADM}/validatingadmissionpolicies`,
      policy('cluster-limit', {
        paramKind: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass' },
        validations: [{ expression: '!has(object.data) || size(object.data) <= params.value' }],
      }),
    )
    await created(client, `${ADM}/validatingadmissionpolicybindings`, binding('cluster-limit', 'cluster-limit', { paramRef: { name: 'key-budget', parameterNotFoundAction: 'Deny' } }))
    const three = configMap('three', { a: '1', b: '2', c: '3' })
    await untilAnswered(client, 'team-b', three, 422)
    assert.match((await client.post('/api/v1/namespaces/team-b/configmaps', three)).body.message, /'cluster-limit' with binding 'cluster-limit' denied request: failed expression/)
  })

  it('applies a binding only where its namespace and object selectors match, and acts on a changed policy without restart', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await namespace(client, 'prod', { env: 'prod' })
    await namespace(client, 'dev', { env: 'dev' })
    await created(client, `${ADM}/validatingadmissionpolicies`, policy('frozen', { validations: [{ expression: 'false', message: 'frozen' }] }))
    await created(
      client,
      `${ADM}/validatingadmissionpolicybindings`,
      binding('frozen-prod', 'frozen', {
        matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } }, objectSelector: { matchExpressions: [{ key: 'exempt', operator: 'DoesNotExist' }] } },
      }),
    )
    await untilAnswered(client, 'prod', configMap('probe'), 422)
    assert.equal((await client.post('/api/v1/namespaces/dev/configmaps', configMap('free'))).status, 201)
    assert.equal((await client.post('/api/v1/namespaces/prod/configmaps', configMap('exempt', {}, { exempt: 'yes' }))).status, 201)
    assert.equal((await client.post('/api/v1/namespaces/prod/configmaps', configMap('held'))).status, 422)

    const current = (await client.get(`${ADM}/validatingadmissionpolicies/frozen`)).body
    current.spec.validations = [{ expression: 'true' }]
    assert.equal((await client.put(`${ADM}/validatingadmissionpolicies/frozen`, current)).status, 200)
    await untilAnswered(client, 'prod', configMap('probe'), 201)
    assert.equal((await client.post('/api/v1/namespaces/prod/configmaps', configMap('thawed'))).status, 201)
  })

  it('writes the type check of each expression against the kinds it matches to the status', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    await created(client, `${ADM}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'typo' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
        // The third as upstream's "should type check validation expressions" spec writes it, looking for cel-go's words.
        validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.replicass <= 5' }, { expression: "object.spec.replicas > '1'" }],
      },
    })
    let status: any
    await eventually(
      'the status is written',
      async () => {
        status = (await client.get(`${ADM}/validatingadmissionpolicies/typo`)).body.status
        return status?.observedGeneration === 1
      },
      WAIT_MS,
    )
    const warnings = status.typeChecking.expressionWarnings
    assert.equal(warnings.length, 2)
    assert.equal(warnings[0].fieldRef, 'spec.validations[1].expression')
    assert.match(warnings[0].warning, /^apps\/v1, Kind=Deployment: ERROR: <input>:1:/)
    assert.equal(warnings[1].fieldRef, 'spec.validations[2].expression')
    assert.equal(
      warnings[1].warning,
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > '1'\n | .....................^",
    )
  })

  it("installs the Gateway API's published policy, which refuses old bundles and a switch to the experimental channel", { skip: WITHOUT_REAL_WORLD }, async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    const file = join(REAL_WORLD_DIR ?? '', 'gateway-api/config/crd/standard/gateway.networking.k8s.io_vap_safeupgrades.yaml')
    const [vap, vapBinding] = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS())
    await created(client, `${ADM}/validatingadmissionpolicies`, vap)
    await created(client, `${ADM}/validatingadmissionpolicybindings`, vapBinding)
    const crd = (bundle: string, channel: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: 'widgets.gateway.networking.k8s.io',
        annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/gateway-api/pull/1538', 'gateway.networking.k8s.io/bundle-version': bundle, 'gateway.networking.k8s.io/channel': channel },
      },
      spec: {
        group: 'gateway.networking.k8s.io',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    })
    const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
    await eventually('the policy refuses an old bundle', async () => (await client.post(`${crds}?dryRun=All`, crd('v1.2.0', 'standard'))).status === 422, WAIT_MS)
    const old = await client.post(crds, crd('v1.2.0', 'standard'))
    assert.equal(old.status, 422)
    assert.equal(
      old.body.message,
      `customresourcedefinitions.apiextensions.k8s.io "widgets.gateway.networking.k8s.io" is forbidden: ValidatingAdmissionPolicy 'safe-upgrades.gateway.networking.k8s.io' with binding 'safe-upgrades.gateway.networking.k8s.io' denied request: Installing CRDs with version before v1.5.0 is prohibited by default. Uninstall ValidatingAdmissionPolicy safe-upgrades.gateway.networking.k8s.io to install older versions.`,
    )
    assert.equal((await client.get(`${crds}/widgets.gateway.networking.k8s.io`)).status, 404)

    // The release's own bundle version is one its policy accepts (the policy of v1.6 refuses v1.5.x too).
    const release: string = vap.metadata.annotations['gateway.networking.k8s.io/bundle-version']
    await created(client, crds, crd(release, 'standard'))
    const toExperimental = { metadata: { annotations: { 'gateway.networking.k8s.io/channel': 'experimental' } } }
    const switched = await client.patch(`${crds}/widgets.gateway.networking.k8s.io`, toExperimental, 'application/merge-patch+json')
    assert.equal(switched.status, 422)
    assert.match(switched.body.message, /denied request: Installing experimental CRDs on top of standard channel CRDs is prohibited by default/)
    const stored = (await client.get(`${crds}/widgets.gateway.networking.k8s.io`)).body
    assert.equal(stored.metadata.annotations['gateway.networking.k8s.io/channel'], 'standard')
  })
})

describe('MutatingAdmissionPolicy', () => {
  it('is inert without its feature gate, as at 1.32', async () => {
    const client = await startServer({ admission: { plugins: ['MutatingAdmissionPolicy'] } })
    await created(client, `${ADM}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'label' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"stamped": "yes"}}}' } }],
      },
    })
    await created(client, `${ADM}/mutatingadmissionpolicybindings`, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'label' }, spec: { policyName: 'label' } })
    const cm = await created(client, '/api/v1/namespaces/default/configmaps', configMap('plain'))
    // Sent as {}, kept unlabelled: an empty map with omitempty is left out, as Go writes it.
    assert.equal(cm.metadata.labels, undefined)
  })

  it('applies ApplyConfiguration and JSONPatch mutations with params, visible on the stored object', async () => {
    const client = await startServer({ admission: { plugins: ['MutatingAdmissionPolicy'], mutatingAdmissionPolicy: true } })
    await created(client, '/api/v1/namespaces/default/configmaps', configMap('stamp', { team: 'blue' }))
    await created(client, `${ADM}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'stamp' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        matchConditions: [{ name: 'not-the-param', expression: "object.metadata.name != 'stamp'" }],
        variables: [{ name: 'team', expression: 'params.data.team' }],
        mutations: [
          { patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": variables.team}}}' } },
          {
            patchType: 'JSONPatch',
            jsonPatch: { expression: '[JSONPatch{op: "add", path: "/metadata/annotations", value: {}}, JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/stamped"), value: "by " + variables.team}]' },
          },
        ],
      },
    })
    await created(client, `${ADM}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'stamp' },
      spec: { policyName: 'stamp', paramRef: { name: 'stamp', namespace: 'default', parameterNotFoundAction: 'Deny' } },
    })
    await eventually('the mutation shows', async () => (await client.post('/api/v1/namespaces/default/configmaps?dryRun=All', configMap('probe'))).body?.metadata?.labels?.team === 'blue', WAIT_MS)
    await created(client, '/api/v1/namespaces/default/configmaps', configMap('stamped', {}, { keep: 'me' }))
    const stored = (await client.get('/api/v1/namespaces/default/configmaps/stamped')).body
    assert.deepEqual(stored.metadata.labels, { keep: 'me', team: 'blue' })
    assert.deepEqual(stored.metadata.annotations, { 'example.com/stamped': 'by blue' })
  })
})
