/** The CustomResourceDefinition strategy: defaults, the status across writes, update rules and the first delete. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { customResourceDefinitionStrategy as strategy } from '../../../../core/resources/apiextensions/strategy.js'
import type { CustomResourceDefinition } from '../../../../core/resources/apiextensions/types.js'
import type { KubeObject } from '../../../../core/machinery/object.js'
import { create, crd, ctx, update, version } from './fixtures.js'
import { valueAtOnce } from '../../../../core/machinery/time-slice.js'

const established = (obj: KubeObject): KubeObject => ({
  ...obj,
  status: { ...(obj['status'] as object), conditions: [{ type: 'Established', status: 'True', lastTransitionTime: '2025-03-01T09:00:00Z' }] },
})

describe('CustomResourceDefinition defaults', () => {
  it('fills singular, listKind, the None conversion and the stored version', () => {
    const { stored, problems } = create(crd({ names: { plural: 'crontabs', kind: 'CronTab' } }))
    assert.deepEqual(problems, [])
    const spec = (stored as CustomResourceDefinition).spec
    assert.deepEqual(spec.names, { plural: 'crontabs', kind: 'CronTab', singular: 'crontab', listKind: 'CronTabList' })
    assert.deepEqual(spec.conversion, { strategy: 'None' })
    assert.deepEqual(stored['status'], { storedVersions: ['v1'] })
  })

  it('gives a conversion service port 443, and writes served and storage out', () => {
    const service = { namespace: 'ns', name: 'conv' }
    const { stored, problems } = create(
      crd({
        versions: [{ ...version('v1'), served: undefined }, version('v2', { storage: undefined })],
        conversion: { strategy: 'Webhook', webhook: { clientConfig: { service }, conversionReviewVersions: ['v1'] } },
        preserveUnknownFields: false,
      }),
    )
    assert.deepEqual(problems, [])
    const spec = (stored as CustomResourceDefinition).spec
    assert.deepEqual(spec.conversion?.webhook?.clientConfig?.service, { namespace: 'ns', name: 'conv', port: 443 })
    assert.deepEqual(spec.versions.map((v) => [v.served, v.storage]), [[false, true], [true, false]])
    assert.equal('preserveUnknownFields' in spec, false)
  })
})

describe('CustomResourceDefinition status', () => {
  it('drops whatever status a create sends, keeping only the stored version', () => {
    const sent = { ...crd(), status: { acceptedNames: { plural: 'x', kind: 'X' }, storedVersions: ['v0'], conditions: [{ type: 'Established', status: 'True' }] } }
    const { stored, problems } = create(sent)
    assert.deepEqual(problems, [])
    assert.deepEqual(stored['status'], { storedVersions: ['v1'] })
  })

  it('keeps the stored status on an update of the main resource and records a new storage version', () => {
    const old = established(create(crd()).stored)
    const next = crd({ versions: [version('v1', { storage: false }), version('v2')] })
    next['status'] = { storedVersions: [] }
    const { stored, problems } = update(next, old)
    assert.deepEqual(problems, [])
    const status = stored['status'] as CustomResourceDefinition['status']
    assert.deepEqual(status?.storedVersions, ['v1', 'v2'])
    assert.deepEqual(status?.conditions?.map((c) => c.type), ['Established'])
  })

  it('refuses to drop a version that objects may still be stored in', () => {
    const old = create(crd({ versions: [version('v1', { storage: false }), version('v2')] })).stored
    old['status'] = { storedVersions: ['v1', 'v2'] }
    const { problems } = update(crd({ versions: [version('v2')] }), old)
    assert.deepEqual(problems, [
      'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain ' +
        'in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions',
    ])
  })

  it('checks the accepted names and stored versions a status write sets', () => {
    const old = create(crd()).stored
    const next = structuredClone(old)
    next['status'] = { acceptedNames: { plural: 'Crontabs', kind: 'CronTab' }, storedVersions: ['v0'] }
    const problems = valueAtOnce(strategy.validateUpdate?.(next, old, ctx) ?? []).map((e) => `${e.field}: ${e.detail}`)
    assert.deepEqual(problems, [
      "status.acceptedNames.plural: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'status.storedVersions: must have the storage version v1',
      'status.storedVersions[0]: missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until ' +
        'a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions',
    ])
  })
})

describe('CustomResourceDefinition updates', () => {
  it('never lets the group or plural change, and once established neither the scope nor the kind', () => {
    const old = established(create(crd()).stored)
    const next = crd({ group: 'other.example.com', scope: 'Cluster', names: { plural: 'jobs', kind: 'Job' } })
    assert.deepEqual(update(next, old).problems, [
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Job": field is immutable',
      'spec.group: Invalid value: "other.example.com": field is immutable',
      'spec.names.plural: Invalid value: "jobs": field is immutable',
    ])
  })

  it('lets the scope and kind change before the CRD is established', () => {
    const old = create(crd()).stored
    assert.deepEqual(update(crd({ scope: 'Cluster', names: { plural: 'crontabs', kind: 'Cron' } }), old).problems, [])
  })

  it('does not ask for schemas a stored CRD never had, but for the served versions it keeps them for pruning', () => {
    const old = create(crd()).stored
    ;(old as CustomResourceDefinition).spec.versions = [{ name: 'v1', served: true, storage: true }]
    const unserved = { name: 'v1', served: false, storage: true }
    assert.deepEqual(update(crd({ versions: [unserved] }), old).problems, [])
    assert.deepEqual(update(crd({ versions: [{ ...unserved, served: true }] }), old).problems, [
      'spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned',
    ])
  })
})

describe('CustomResourceDefinition deletion', () => {
  it('marks the CRD on the first delete: timestamp, cleanup finalizer and Terminating condition', () => {
    const stored = create(crd()).stored
    stored.metadata.finalizers = ['example.com/keep']
    const marked = strategy.beforeDelete?.(structuredClone(stored), ctx) as CustomResourceDefinition
    assert.equal(marked.metadata.deletionTimestamp, '2025-03-01T10:00:00Z')
    assert.deepEqual(marked.metadata.finalizers, ['example.com/keep', 'customresourcecleanup.apiextensions.k8s.io'])
    assert.deepEqual(marked.status?.conditions, [
      {
        type: 'Terminating',
        status: 'True',
        lastTransitionTime: '2025-03-01T10:00:00Z',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      },
    ])
    assert.deepEqual(marked.status?.storedVersions, ['v1'])
  })

  it('leaves a CRD already marked to the generic delete', () => {
    const stored = create(crd()).stored
    stored.metadata.deletionTimestamp = '2025-03-01T09:00:00Z'
    assert.equal(strategy.beforeDelete?.(stored, ctx), undefined)
  })
})
