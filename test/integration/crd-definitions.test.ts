/** CustomResourceDefinitions through the API: defaults, the 422 causes of invalid ones, updates, status writes and the first delete. */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { type Reply, startServer, type TestClient } from './harness.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

const SCHEMA = {
  type: 'object',
  properties: {
    spec: { type: 'object', properties: { image: { type: 'string' }, replicas: { type: 'integer' } } },
    status: { type: 'object', properties: { replicas: { type: 'integer' } } },
  },
}

function definition(plural: string, kind: string, spec: Record<string, unknown> = {}, name = `${plural}.stable.example.com`): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'stable.example.com',
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } }],
      ...spec,
    },
  }
}

const causes = (res: Reply): string[] => res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)

describe('CustomResourceDefinitions through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('stores a created CRD with upstream defaults, generation 1 and its stored version', async () => {
    const res = await client.post(CRDS, definition('crontabs', 'CronTab'))
    assert.equal(res.status, 201, res.text)
    const read = await client.get(`${CRDS}/crontabs.stable.example.com`)
    assert.equal(read.status, 200)
    assert.deepEqual(read.body.spec.names, { plural: 'crontabs', kind: 'CronTab', singular: 'crontab', listKind: 'CronTabList' })
    assert.deepEqual(read.body.spec.conversion, { strategy: 'None' })
    assert.equal(read.body.metadata.generation, 1)
    assert.deepEqual(read.body.status.storedVersions, ['v1'])
  })

  it('refuses invalid CRDs with every cause at upstream paths, and stores nothing', async () => {
    const bad = definition('widgets', 'Widget', {
      group: 'example',
      scope: 'Global',
      versions: [
        { name: 'v1', served: true, storage: true },
        { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA }, subresources: { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } } },
      ],
    })
    const res = await client.post(CRDS, bad)
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.reason, 'Invalid')
    assert.deepEqual(causes(res), [
      'metadata.name: Invalid value: "widgets.stable.example.com": must be spec.names.plural+"."+spec.group',
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
      'spec.versions[1].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
      'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", ' +
        'Served:true, Storage:true, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), ' +
        'Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), ' +
        'SelectableFields:[]apiextensions.SelectableField(nil)}, apiextensions.CustomResourceDefinitionVersion{Name:"v2", Served:true, Storage:true, ' +
        'Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(0xc000000000), ' +
        'Subresources:(*apiextensions.CustomResourceSubresources)(0xc000000000), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), ' +
        'SelectableFields:[]apiextensions.SelectableField(nil)}}: must have exactly one version marked as storage version',
      'status.storedVersions: Invalid value: []string{"v1"}: must have the storage version v2',
    ])
    assert.equal((await client.get(`${CRDS}/widgets.stable.example.com`)).status, 404)
    assert.equal((await client.get(`${CRDS}/widgets.example`)).status, 404)
  })

  it('refuses a schema that is not structural and a rule that does not compile, naming them at spec level', async () => {
    const openAPIV3Schema = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.spec.size > 1' }],
      properties: { spec: { type: 'object', properties: { size: {} } } },
    }
    const res = await client.post(CRDS, definition('gadgets', 'Gadget', { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }] }))
    assert.equal(res.status, 422, res.text)
    assert.match(res.body.message, /^CustomResourceDefinition\.apiextensions\.k8s\.io "gadgets\.stable\.example\.com" is invalid: /)
    assert.deepEqual(causes(res), ['spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields'])
    assert.equal((await client.get(`${CRDS}/gadgets.stable.example.com`)).status, 404)
  })

  it('refuses webhook conversion without https and a known review version', async () => {
    const conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://convert.example.com/' }, conversionReviewVersions: ['v9'] } }
    const res = await client.post(CRDS, definition('gizmos', 'Gizmo', { conversion }))
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(causes(res), [
      `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v9"}: must include at least one of v1, v1beta1',
    ])
    assert.equal((await client.get(`${CRDS}/gizmos.stable.example.com`)).status, 404)
  })

  it('records a new storage version on update, bumps the generation, and keeps the group', async () => {
    const created = await client.post(CRDS, definition('backups', 'Backup'))
    assert.equal(created.status, 201, created.text)
    const v1 = { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: SCHEMA } }
    const v2 = { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA } }
    const updated = await client.update(`${CRDS}/backups.stable.example.com`, (current) => ({ ...current, spec: { ...current.spec, versions: [v1, v2] } }))
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual(updated.body.status.storedVersions, ['v1', 'v2'])
    assert.equal(updated.body.metadata.generation, 2)

    const regrouped = await client.update(`${CRDS}/backups.stable.example.com`, (latest) => ({ ...latest, spec: { ...latest.spec, group: 'other.example.com' } }))
    assert.equal(regrouped.status, 422, regrouped.text)
    assert.ok(causes(regrouped).includes('spec.group: Invalid value: "other.example.com": field is immutable'), regrouped.text)
    assert.equal((await client.get(`${CRDS}/backups.stable.example.com`)).body.spec.group, 'stable.example.com')
  })

  it('refuses a status write with accepted names that are not DNS-1035 labels', async () => {
    const created = await client.post(CRDS, definition('snapshots', 'Snapshot'))
    assert.equal(created.status, 201, created.text)
    const patch = { status: { acceptedNames: { plural: 'Snap_Shots', kind: 'Snapshot' } } }
    const res = await client.patch(`${CRDS}/snapshots.stable.example.com/status`, patch, 'application/merge-patch+json')
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(causes(res), [
      'status.acceptedNames.plural: Invalid value: "Snap_Shots": a DNS-1035 label must consist of lower case alphanumeric characters or ' +
        "'-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for " +
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ])
  })

  it("checks a status write as upstream's status strategy does: the accepted names, not the approval nor the stored versions", async () => {
    // A protected group's definition needs the approval annotation when it is created or updated, not on a status write.
    const approved = definition('policies', 'Policy', { group: 'policies.k8s.io' }, 'policies.policies.k8s.io')
    approved['metadata'] = { name: 'policies.policies.k8s.io', annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/pull/1111' } }
    const created = await client.post(CRDS, approved)
    assert.equal(created.status, 201, created.text)
    const url = `${CRDS}/policies.policies.k8s.io`
    const unapproved = { metadata: { annotations: { 'api-approved.kubernetes.io': null } } }
    const update = await client.patch(url, unapproved, 'application/merge-patch+json')
    assert.equal(update.status, 422, update.text)
    const status = await client.patch(`${url}/status`, { ...unapproved, status: { storedVersions: ['v1', 'v0'] } }, 'application/merge-patch+json')
    assert.equal(status.status, 200, status.text)
    const read = await client.get(url)
    assert.equal(read.body.metadata.annotations?.['api-approved.kubernetes.io'], undefined)
    assert.deepEqual(read.body.status.storedVersions, ['v1', 'v0'])
  })

  it('answers the first delete with the CRD marked Terminating and held by the cleanup finalizer', async () => {
    const created = await client.post(CRDS, definition('reports', 'Report'))
    assert.equal(created.status, 201, created.text)
    const res = await client.delete(`${CRDS}/reports.stable.example.com`)
    assert.equal(res.status, 200, res.text)
    assert.ok(res.body.metadata.deletionTimestamp, res.text)
    assert.ok(res.body.metadata.finalizers.includes('customresourcecleanup.apiextensions.k8s.io'), res.text)
    const terminating = res.body.status.conditions.find((c: { type: string }) => c.type === 'Terminating')
    assert.deepEqual(
      { status: terminating.status, reason: terminating.reason, message: terminating.message },
      { status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' },
    )
  })
})
