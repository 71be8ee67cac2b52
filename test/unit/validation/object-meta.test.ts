import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText } from '../../../core/machinery/field.js'
import { validateObjectMeta } from '../../../core/validation/object-meta.js'

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
      'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
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
