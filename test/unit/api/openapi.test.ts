import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fnv1a64Hex, openApiDocument, openApiIndex } from '../../../core/api/openapi.js'
import { ALL_VERBS, Catalogue, type ResourceEntry } from '../../../core/resources/catalogue.js'

function entry(partial: Partial<ResourceEntry> & Pick<ResourceEntry, 'kind' | 'resource' | 'typeName'>): ResourceEntry {
  return {
    group: '',
    version: 'v1',
    listKind: `${partial.kind}List`,
    singular: partial.kind.toLowerCase(),
    namespaced: true,
    verbs: ALL_VERBS,
    validateName: () => [],
    strategy: {},
    columns: [],
    ...partial,
  }
}

const configmaps = entry({ kind: 'ConfigMap', resource: 'configmaps', typeName: 'io.k8s.api.core.v1.ConfigMap', shortNames: ['cm'] })
const namespaces = entry({
  kind: 'Namespace',
  resource: 'namespaces',
  typeName: 'io.k8s.api.core.v1.Namespace',
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{ name: 'status', kind: 'Namespace', verbs: ['get', 'patch', 'update'] }],
})
const reviews = entry({
  group: 'authorization.k8s.io',
  kind: 'SelfSubjectAccessReview',
  resource: 'selfsubjectaccessreviews',
  typeName: 'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  namespaced: false,
  verbs: ['create'],
})

type Json = Record<string, unknown>

function docFor(catalogue: Catalogue, key: string): Json {
  const doc = openApiDocument(catalogue, key)
  assert.ok(doc, `no document for ${key}`)
  return doc as Json
}

function at(value: unknown, ...path: string[]): unknown {
  let v = value
  for (const p of path) {
    assert.ok(typeof v === 'object' && v !== null, `missing ${path.join('.')} at ${p}`)
    v = (v as Json)[p]
  }
  return v
}

describe('openApiIndex', () => {
  it('lists one hashed URL per group/version, as kubectl expects under paths', () => {
    const index = openApiIndex(new Catalogue([configmaps, namespaces, reviews]))
    assert.deepEqual(Object.keys(index.paths), ['api/v1', 'apis/authorization.k8s.io/v1'])
    assert.match(index.paths['api/v1']!.serverRelativeURL, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{16}$/)
    assert.match(
      index.paths['apis/authorization.k8s.io/v1']!.serverRelativeURL,
      /^\/openapi\/v3\/apis\/authorization\.k8s\.io\/v1\?hash=[0-9A-F]{16}$/,
    )
  })

  it('gives the same hash for the same catalogue contents and a new one when they change', () => {
    const a = openApiIndex(new Catalogue([configmaps, namespaces])).paths['api/v1']!.serverRelativeURL
    const b = openApiIndex(new Catalogue([configmaps, namespaces])).paths['api/v1']!.serverRelativeURL
    const c = openApiIndex(new Catalogue([configmaps])).paths['api/v1']!.serverRelativeURL
    assert.equal(a, b)
    assert.notEqual(a, c)
  })

  it('hashes with 64-bit FNV-1a', () => {
    assert.equal(fnv1a64Hex(''), 'CBF29CE484222325')
    assert.equal(fnv1a64Hex('foobar'), '85944171F73967E8')
  })
})

describe('openApiDocument', () => {
  const catalogue = new Catalogue([configmaps, namespaces, reviews])

  it('answers undefined for a group/version the catalogue lacks', () => {
    assert.equal(openApiDocument(catalogue, 'apis/apps/v1'), undefined)
  })

  it('is built once per catalogue', () => {
    assert.equal(openApiDocument(catalogue, 'api/v1'), openApiDocument(catalogue, 'api/v1'))
  })

  it('has namespaced, all-namespaces and item paths for configmaps', () => {
    const paths = at(docFor(catalogue, 'api/v1'), 'paths') as Json
    assert.equal(at(docFor(catalogue, 'api/v1'), 'openapi'), '3.0.0')
    for (const p of [
      '/api/v1/namespaces/{namespace}/configmaps',
      '/api/v1/namespaces/{namespace}/configmaps/{name}',
      '/api/v1/configmaps',
      '/api/v1/namespaces',
      '/api/v1/namespaces/{name}',
      '/api/v1/namespaces/{name}/status',
    ]) {
      assert.ok(paths[p], `missing path ${p}`)
    }
    assert.deepEqual(Object.keys(paths['/api/v1/namespaces/{namespace}/configmaps/{name}'] as Json).sort(), [
      'delete',
      'get',
      'parameters',
      'patch',
      'put',
    ])
    // namespaces have no deletecollection verb here
    assert.equal(at(paths, '/api/v1/namespaces', 'delete'), undefined)
  })

  it('tags the PATCH operation with the GVK and a fieldValidation parameter (server-side validation for create -f)', () => {
    const patch = at(docFor(catalogue, 'api/v1'), 'paths', '/api/v1/namespaces/{namespace}/configmaps/{name}', 'patch') as Json
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'ConfigMap' })
    assert.equal(patch['x-kubernetes-action'], 'patch')
    const names = (patch['parameters'] as Json[]).map((p) => p['name'])
    for (const n of ['dryRun', 'fieldManager', 'fieldValidation', 'force']) assert.ok(names.includes(n), n)
    assert.deepEqual(Object.keys(at(patch, 'requestBody', 'content') as Json), [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ])
  })

  it('accepts JSON and YAML bodies on create and replace, and lists with list actions', () => {
    const paths = at(docFor(catalogue, 'api/v1'), 'paths') as Json
    const post = at(paths, '/api/v1/namespaces/{namespace}/configmaps', 'post') as Json
    assert.equal(post['x-kubernetes-action'], 'post')
    const postTypes = Object.keys(at(post, 'requestBody', 'content') as Json)
    assert.ok(postTypes.includes('application/json') && postTypes.includes('application/yaml'))
    assert.deepEqual(at(post, 'requestBody', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/io.k8s.api.core.v1.ConfigMap',
    })
    const put = at(paths, '/api/v1/namespaces/{namespace}/configmaps/{name}', 'put') as Json
    assert.ok((put['parameters'] as Json[]).some((p) => p['name'] === 'fieldValidation'))
    const list = at(paths, '/api/v1/configmaps', 'get') as Json
    assert.equal(list['x-kubernetes-action'], 'list')
    assert.deepEqual(at(list, 'responses', '200', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/io.k8s.api.core.v1.ConfigMapList',
    })
  })

  it('carries component schemas for every reachable type, with GVKs, formats and list extensions', () => {
    const schemas = at(docFor(catalogue, 'api/v1'), 'components', 'schemas') as Json
    for (const name of [
      'io.k8s.api.core.v1.ConfigMap',
      'io.k8s.api.core.v1.ConfigMapList',
      'io.k8s.api.core.v1.Namespace',
      'io.k8s.api.core.v1.NamespaceSpec',
      'io.k8s.api.core.v1.NamespaceCondition',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
      'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
    ]) {
      assert.ok(schemas[name], `missing schema ${name}`)
    }
    assert.deepEqual(at(schemas, 'io.k8s.api.core.v1.ConfigMap', 'x-kubernetes-group-version-kind'), [
      { group: '', version: 'v1', kind: 'ConfigMap' },
    ])
    assert.deepEqual(at(schemas, 'io.k8s.api.core.v1.ConfigMap', 'properties', 'binaryData'), {
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
    })
    assert.deepEqual(at(schemas, 'io.k8s.api.core.v1.ConfigMap', 'properties', 'metadata'), {
      $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    })
    const meta = at(schemas, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'properties') as Json
    assert.deepEqual(meta['generation'], { type: 'integer', format: 'int64' })
    assert.deepEqual(meta['creationTimestamp'], { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time' })
    assert.deepEqual(at(meta, 'ownerReferences', 'x-kubernetes-patch-merge-key'), 'uid')
    assert.deepEqual(at(meta, 'ownerReferences', 'x-kubernetes-patch-strategy'), 'merge')
    assert.deepEqual(at(meta, 'ownerReferences', 'x-kubernetes-list-map-keys'), ['uid'])
    assert.deepEqual(at(meta, 'ownerReferences', 'x-kubernetes-list-type'), 'map')
    assert.deepEqual(at(schemas, 'io.k8s.apimachinery.pkg.apis.meta.v1.Time'), { type: 'string', format: 'date-time' })
    assert.deepEqual(at(schemas, 'io.k8s.api.core.v1.ConfigMapList', 'required'), ['items'])
  })

  it('documents the authorization group separately, with create only', () => {
    const doc = docFor(catalogue, 'apis/authorization.k8s.io/v1')
    const paths = at(doc, 'paths') as Json
    assert.deepEqual(Object.keys(paths), ['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'])
    const post = at(paths, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 'post') as Json
    assert.deepEqual(post['x-kubernetes-group-version-kind'], {
      group: 'authorization.k8s.io',
      version: 'v1',
      kind: 'SelfSubjectAccessReview',
    })
    const schemas = at(doc, 'components', 'schemas') as Json
    assert.ok(schemas['io.k8s.api.authorization.v1.ResourceAttributes'])
    assert.equal(schemas['io.k8s.api.core.v1.ConfigMap'], undefined)
  })

  it('describes a kind missing from the type table as an open object tagged with its GVK', () => {
    const widgets = entry({ group: 'example.com', kind: 'Widget', resource: 'widgets', typeName: 'com.example.v1.Widget' })
    const doc = docFor(new Catalogue([widgets]), 'apis/example.com/v1')
    assert.deepEqual(at(doc, 'components', 'schemas', 'com.example.v1.Widget'), {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Widget' }],
    })
  })

  it('is plain JSON: every $ref points at a schema in the document', () => {
    const doc = docFor(catalogue, 'api/v1')
    const schemas = at(doc, 'components', 'schemas') as Json
    const refs = JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)
    for (const [, name] of refs) assert.ok(schemas[name!], `dangling $ref ${name}`)
  })
})
