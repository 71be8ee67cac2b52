import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'
import { validateObjectMetaInSteps, validateObjectMetaUpdateInSteps } from '../../../core/validation/object-meta.js'
import { isDNS1123Subdomain } from '../../../core/machinery/names.js'
import { runAtOnce, UNITS_PER_STEP } from '../../../core/machinery/time-slice.js'

type MetadataRules = Parameters<typeof validateObjectMetaInSteps>[1]
const validateObjectMeta = (obj: KubeObject, rules: MetadataRules) => runAtOnce(validateObjectMetaInSteps(obj, rules))
const validateObjectMetaUpdate = (obj: KubeObject, old: KubeObject, rules: MetadataRules) => runAtOnce(validateObjectMetaUpdateInSteps(obj, old, rules))

// Only the two fields validateObjectMeta reads from an entry.
const entry = { namespaced: true, validateName: () => [] } as unknown as ResourceEntry

function problems(metadata: Record<string, unknown>): string[] {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', ...metadata } } as KubeObject
  return validateObjectMeta(obj, entry).map(errorText)
}

const owner = (fields: Record<string, unknown> = {}) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-1', ...fields })

describe('owner references, as upstream validates them', () => {
  it('accepts complete references, a core/v1 owner and one controller', () => {
    assert.deepEqual(problems({ ownerReferences: [owner({ controller: true }), owner({ apiVersion: 'v1', kind: 'Pod', name: 'p' })] }), [])
  })

  it('reports each empty field as invalid, at a path without the index', () => {
    assert.deepEqual(problems({ ownerReferences: [owner(), { apiVersion: '', kind: '', name: '', uid: '' }] }), [
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ])
  })

  it('wants a version in the apiVersion', () => {
    assert.deepEqual(problems({ ownerReferences: [owner({ apiVersion: 'apps/' })] }), [
      'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
    ])
    // More than one slash does not parse, so no version either.
    assert.deepEqual(problems({ ownerReferences: [owner({ apiVersion: 'a/b/c' })] }), [
      'metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty',
    ])
  })

  it('refuses a core/v1 Event as an owner, but not an events.k8s.io one', () => {
    assert.deepEqual(problems({ ownerReferences: [owner({ apiVersion: 'v1', kind: 'Event', name: 'e' })] }), [
      'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u-1", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner',
    ])
    assert.deepEqual(problems({ ownerReferences: [owner({ apiVersion: 'events.k8s.io/v1', kind: 'Event', name: 'e' })] }), [])
  })

  it('names the first controller and each further one', () => {
    const refs = [owner({ controller: true }), owner({ kind: 'Deployment', name: 'd', controller: false }), owner({ kind: 'StatefulSet', name: 's', controller: true })]
    const all =
      '[]v1.OwnerReference{' +
      'v1.OwnerReference{APIVersion:"apps/v1", Kind:"ReplicaSet", Name:"rs", UID:"u-1", Controller:(*bool)(&true), BlockOwnerDeletion:(*bool)(nil)}, ' +
      'v1.OwnerReference{APIVersion:"apps/v1", Kind:"Deployment", Name:"d", UID:"u-1", Controller:(*bool)(&false), BlockOwnerDeletion:(*bool)(nil)}, ' +
      'v1.OwnerReference{APIVersion:"apps/v1", Kind:"StatefulSet", Name:"s", UID:"u-1", Controller:(*bool)(&true), BlockOwnerDeletion:(*bool)(nil)}}'
    assert.deepEqual(problems({ ownerReferences: refs }), [
      `metadata.ownerReferences: Invalid value: ${all}: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs and StatefulSet/s`,
    ])
  })
})

describe('finalizers, as upstream validates them', () => {
  it('refuses orphan and foregroundDeletion together', () => {
    assert.deepEqual(problems({ finalizers: ['example.com/keep', 'orphan', 'foregroundDeletion'] }), [
      'metadata.finalizers: Invalid value: []string{"example.com/keep", "orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    ])
  })

  it('accepts either one alone', () => {
    assert.deepEqual(problems({ finalizers: ['orphan'] }), [])
    assert.deepEqual(problems({ finalizers: ['foregroundDeletion'] }), [])
  })
})

const LABEL_KEY_PATTERN = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`

describe('labels, annotations and finalizers, as upstream words them', () => {
  const configMaps = { group: '', kind: 'ConfigMap', namespaced: true, validateName: isDNS1123Subdomain } as unknown as ResourceEntry
  const leases = { ...configMaps, group: 'coordination.k8s.io', kind: 'Lease' } as unknown as ResourceEntry
  const customResources = { ...configMaps, group: 'example.com', kind: 'Widget', schema: {} } as unknown as ResourceEntry
  const of = (rules: ResourceEntry, metadata: Record<string, unknown>) =>
    validateObjectMeta({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', ...metadata } } as KubeObject, rules).map(errorText)

  it('names the label map, not the entry, and shows the label value pattern', () => {
    assert.deepEqual(of(configMaps, { name: 'x', labels: { app: 'no spaces' } }), [
      `metadata.labels: Invalid value: "no spaces": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    ])
  })

  it('reports an empty key as empty and as not matching the pattern', () => {
    assert.deepEqual(of(configMaps, { name: 'x', annotations: { '': 'v' } }), [
      'metadata.annotations: Invalid value: "": name part must be non-empty',
      `metadata.annotations: Invalid value: "": ${LABEL_KEY_PATTERN}`,
    ])
  })

  it('checks annotation keys whatever their case, label keys as written', () => {
    assert.deepEqual(of(configMaps, { name: 'x', annotations: { 'Example.COM/Owner': 'me' } }), [])
    assert.deepEqual(of(configMaps, { name: 'x', labels: { 'Example.COM/owner': 'me' } }), [
      `metadata.labels: Invalid value: "Example.COM/owner": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ])
  })

  it('refuses a built-in kind a finalizer that is neither standard nor qualified, at its index', () => {
    assert.deepEqual(of(configMaps, { name: 'x', finalizers: ['kubernetes', 'example.com/cleanup', 'cleanup', 'bad finalizer'] }), [
      `metadata.finalizers: Invalid value: "bad finalizer": ${LABEL_KEY_PATTERN}`,
      'metadata.finalizers[2]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
      'metadata.finalizers[3]: Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified',
    ])
  })

  it('lets kinds validated with the generic rules alone carry any well-formed finalizer', () => {
    assert.deepEqual(of(leases, { name: 'x', finalizers: ['cleanup'] }), [])
    assert.deepEqual(of(customResources, { name: 'x', finalizers: ['cleanup'] }), [])
    // Events are generic through core/v1 only; events.k8s.io writes get the core rules too.
    const coreEvents = { ...configMaps, kind: 'Event' } as unknown as ResourceEntry
    const events = { ...configMaps, group: 'events.k8s.io', kind: 'Event' } as unknown as ResourceEntry
    assert.deepEqual(of(coreEvents, { name: 'x', finalizers: ['cleanup'] }), [])
    assert.deepEqual(of(events, { name: 'x', finalizers: ['cleanup'] }), [
      'metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ])
  })

  it('checks a generateName by the name rule, a trailing dash allowed', () => {
    assert.deepEqual(of(configMaps, { generateName: 'web-', name: 'web-x7k2p' }), [])
    assert.deepEqual(of(configMaps, { generateName: 'Bad_', name: 'Bad_x7k2p' }), [
      `metadata.generateName: Invalid value: "Bad_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      `metadata.name: Invalid value: "Bad_x7k2p": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ])
  })
})

describe('metadata on update, as upstream checks it', () => {
  const configMaps = { group: '', kind: 'ConfigMap', namespaced: true, validateName: isDNS1123Subdomain } as unknown as ResourceEntry
  const leases = { ...configMaps, group: 'coordination.k8s.io', kind: 'Lease' } as unknown as ResourceEntry
  const object = (metadata: Record<string, unknown>) =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', uid: 'u', ...metadata } }) as KubeObject
  const update = (rules: ResourceEntry, before: Record<string, unknown>, after: Record<string, unknown>) =>
    validateObjectMetaUpdate(object(after), object(before), rules).map(errorText)

  it('forbids a finalizer added once deletion began, and lets one go', () => {
    const deleting = { deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['example.com/a'] }
    assert.deepEqual(update(configMaps, deleting, { ...deleting, finalizers: ['example.com/a', 'example.com/c', 'example.com/b'] }), [
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/c"}',
    ])
    assert.deepEqual(update(configMaps, deleting, { ...deleting, finalizers: [] }), [])
    assert.deepEqual(update(configMaps, {}, { finalizers: ['example.com/a'] }), [])
  })

  it('checks finalizer names by the core rule alone, and not at all for generic kinds', () => {
    assert.deepEqual(update(configMaps, {}, { finalizers: ['bad finalizer'] }), [
      'metadata.finalizers[0]: Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified',
    ])
    assert.deepEqual(update(leases, {}, { finalizers: ['bad finalizer', 'orphan', 'foregroundDeletion'] }), [])
  })

  it('keeps the fields fixed at creation and checks labels again', () => {
    assert.deepEqual(update(configMaps, {}, { uid: 'v', labels: { app: 'no spaces' } }), [
      'metadata.uid: Invalid value: "v": field is immutable',
      `metadata.labels: Invalid value: "no spaces": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    ])
  })
})

// A body of 3 MB holds a million owner references, or hundreds of thousands of labels: every kind's metadata.
describe('the metadata of an object of many owner references and labels', () => {
  it('is validated with checkpoints, every error found as at once', () => {
    const count = 20_000
    const obj: KubeObject = {
      metadata: {
        name: 'many',
        namespace: 'ns',
        ownerReferences: Array.from({ length: count }, () => ({}) as never),
        labels: Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, '-'])),
      },
    }
    const work = validateObjectMetaInSteps(obj, entry)
    let checkpoints = 0
    let step = work.next()
    for (; !step.done; step = work.next()) checkpoints++
    assert.ok(checkpoints >= Math.floor((2 * count) / (UNITS_PER_STEP + 1)), `${checkpoints} checkpoints`)
    // Each label's value is refused, then each reference misses four fields.
    assert.equal(step.value.length, count + 4 * count)
    assert.deepEqual(step.value.map(errorText), validateObjectMeta(obj, entry).map(errorText))
  })
})
