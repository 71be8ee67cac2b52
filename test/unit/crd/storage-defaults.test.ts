/**
 * The read-side defaulting of custom resources: an object that lacks a
 * default comes back as a defaulted copy (the stored one, possibly the watch
 * cache's frozen object, untouched); one that lacks none comes back as
 * itself; defaults are those of the version the object is stored in.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { defaultingFromStorage } from '../../../core/crd/storage-defaults.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import type { CustomResourceDefinition } from '../../../core/resources/apiextensions/types.js'
import type { VersionConversion } from '../../../core/resources/catalogue.js'

function crd(v1Default: unknown, v2Default?: unknown): CustomResourceDefinition {
  const version = (name: string, def: unknown, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string', ...(def === undefined ? {} : { default: def }) } } } },
  })
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: { group: 'example.com', scope: 'Cluster', names: { plural: 'things', kind: 'Thing' }, versions: [version('v1', v1Default, true), version('v2', v2Default, false)] },
  } as unknown as CustomResourceDefinition
}

const toV2: VersionConversion = {
  storageVersion: 'example.com/v1',
  toStorage: (obj) => ({ ...obj, apiVersion: 'example.com/v1' }),
  fromStorage: (obj) => ({ ...obj, apiVersion: 'example.com/v2' }),
  forSelection: (obj) => ({ ...obj, apiVersion: 'example.com/v2' }),
}

const thing = (fields: Record<string, unknown> = {}): KubeObject => Object.freeze({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, ...fields }) as KubeObject

describe('defaulting custom resources read from storage', () => {
  it('leaves the conversion as it is for a CRD without defaults', () => {
    assert.equal(defaultingFromStorage(crd(undefined), toV2), toV2)
  })

  it('defaults a frozen stored object by copy, with the stored version\'s schema, then converts it', () => {
    const stored = thing()
    const read = defaultingFromStorage(crd('from-v1', 'from-v2'), toV2).fromStorage(stored) as KubeObject
    assert.deepEqual(read, { apiVersion: 'example.com/v2', kind: 'Thing', metadata: { name: 't' }, a: 'from-v1' })
    assert.equal(stored['a'], undefined)
  })

  it('hands on an object that holds every default as itself, to selectors too', () => {
    const seen: KubeObject[] = []
    const conversion = defaultingFromStorage(crd('x'), { ...toV2, fromStorage: (obj) => (seen.push(obj), obj), forSelection: (obj) => (seen.push(obj), obj) })
    const stored = thing({ a: 'set' })
    conversion.fromStorage(stored)
    conversion.forSelection!(stored)
    assert.deepEqual(seen, [stored, stored])
    assert.equal(seen[0], stored)
    assert.equal(seen[1], stored)
  })

  it('replaces a null the schema does not allow with the default', () => {
    const read = defaultingFromStorage(crd('d'), toV2).fromStorage(thing({ a: null })) as KubeObject
    assert.equal(read['a'], 'd')
  })
})
