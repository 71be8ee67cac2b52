/**
 * An object is stored only when etcd with its defaults would store it:
 * past 1.5 MiB of stored value upstream's etcd refuses the write and the API
 * server answers with etcd's error (a 500 without a reason). The bound is
 * on what is stored, not on the request: an admission plugin that grows a
 * small request into a large object is refused the same way, and nothing
 * is stored.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_STORED_VALUE_BYTES } from '../../core/storage/errors.js'
import { installDefinition, widgetDefinition } from './crd-fixtures.js'
import { eventually, type Reply, startServer, type TestClient } from './harness.js'

const GROUP = 'sizes.example.com'
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`
const ADM = '/apis/admissionregistration.k8s.io/v1'

const definition = widgetDefinition(GROUP, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true })

const widget = (name: string, blob = '') => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, data: { blob } })

/** Upstream's answer: etcd's error passed on as it is, code 500 and no reason. */
function assertTooLarge(reply: Reply): void {
  assert.equal(reply.status, 500, reply.text.slice(0, 300))
  assert.deepEqual(reply.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500 })
}

async function withWidgets(): Promise<TestClient> {
  const api = await startServer({ admission: { plugins: ['MutatingAdmissionPolicy'], mutatingAdmissionPolicy: true } })
  await installDefinition(api, definition)
  return api
}

describe('objects larger than etcd stores', { timeout: 120_000 }, () => {
  it('refuses a create over the bound, storing nothing, and stores one just under it', async () => {
    const api = await withWidgets()
    assertTooLarge(await api.post(WIDGETS, widget('big', 'x'.repeat(MAX_STORED_VALUE_BYTES))))
    assert.equal((await api.get(`${WIDGETS}/big`)).status, 404)
    const near = await api.post(WIDGETS, widget('near', 'x'.repeat(MAX_STORED_VALUE_BYTES - 4096)))
    assert.equal(near.status, 201, near.text.slice(0, 300))
  })

  it('refuses an update that grows an object over the bound, keeping the old version', async () => {
    const api = await withWidgets()
    const created = await api.post(WIDGETS, widget('w'))
    assert.equal(created.status, 201, created.text.slice(0, 300))
    assertTooLarge(await api.put(`${WIDGETS}/w`, { ...created.body, data: { blob: 'x'.repeat(MAX_STORED_VALUE_BYTES) } }))
    const got = await api.get(`${WIDGETS}/w`)
    assert.equal(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion)
    assert.deepEqual(got.body.data, { blob: '' })
  })

  it('refuses an object a MutatingAdmissionPolicy grew past the bound from a small request', async () => {
    const api = await withWidgets()
    // Each variable doubles the one before: 1000 characters times 2^11, some 2 MB, within CEL's cost limit.
    const variables = [{ name: 'v0', expression: `'${'x'.repeat(1000)}'` }]
    for (let i = 1; i <= 11; i++) variables.push({ name: `v${i}`, expression: `variables.v${i - 1} + variables.v${i - 1}` })
    const policy = await api.post(`${ADM}/mutatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'grow' },
      spec: {
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        matchConstraints: { resourceRules: [{ apiGroups: [GROUP], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }] },
        variables,
        mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/data/blob', value: variables.v11}]" } }],
      },
    })
    assert.equal(policy.status, 201, policy.text.slice(0, 300))
    const binding = await api.post(`${ADM}/mutatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'grow' },
      spec: { policyName: 'grow' },
    })
    assert.equal(binding.status, 201, binding.text.slice(0, 300))
    // A dry run stores nothing, so it shows the grown object once the policy is in force.
    await eventually('the policy grows objects', async () => (await api.post(`${WIDGETS}?dryRun=All`, widget('probe'))).body?.data?.blob?.length > MAX_STORED_VALUE_BYTES, 60_000)
    assertTooLarge(await api.post(WIDGETS, widget('grown')))
    assert.equal((await api.get(`${WIDGETS}/grown`)).status, 404)
  })
})
