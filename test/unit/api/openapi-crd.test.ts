import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openApiDocument, openApiIndex } from '../../../core/api/openapi.js'
import { openApiV2Document } from '../../../core/api/openapi-v2.js'
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'
import { ALL_VERBS, Catalogue, type ResourceEntry } from '../../../core/resources/catalogue.js'

type Json = Record<string, unknown>

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

const configmaps = entry({ kind: 'ConfigMap', resource: 'configmaps', typeName: 'io.k8s.api.core.v1.ConfigMap' })

const cronTabSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['cronSpec', 'note'],
      properties: {
        cronSpec: { type: 'string', pattern: '^\\S+$', description: 'when it runs' },
        image: { type: 'string', default: 'busybox' },
        replicas: { type: 'integer', format: 'int32', minimum: 1, maximum: 10 },
        note: { type: 'string', nullable: true },
        port: { 'x-kubernetes-int-or-string': true },
        mode: { type: 'string', anyOf: [{ enum: ['fast'] }, { enum: ['slow'] }] },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
      },
      'x-kubernetes-validations': [{ rule: 'self.replicas <= 10', message: 'too many' }],
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
  },
}

const cronTabs = entry({
  group: 'stable.example.com',
  kind: 'CronTab',
  resource: 'crontabs',
  typeName: 'com.example.stable.v1.CronTab',
  schema: cronTabSchema,
  subresources: [
    { name: 'status', kind: 'CronTab', verbs: ['get', 'patch', 'update'] },
    { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] },
  ],
  scalePaths: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
})

const KEY = 'apis/stable.example.com/v1'
const COLLECTION = '/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'
const ITEM = `${COLLECTION}/{name}`
const CRONTAB_GVK = { group: 'stable.example.com', version: 'v1', kind: 'CronTab' }

function at(value: unknown, ...path: string[]): unknown {
  let v = value
  for (const p of path) {
    assert.ok(typeof v === 'object' && v !== null, `missing ${path.join('.')} at ${p}`)
    v = (v as Json)[p]
  }
  return v
}

function v3(catalogue: Catalogue): Json {
  const doc = openApiDocument(catalogue, KEY)
  assert.ok(doc, `no document for ${KEY}`)
  return doc as Json
}

describe('OpenAPI v3 for a custom resource', () => {
  const catalogue = new Catalogue([configmaps, cronTabs])

  it('lists the custom resource group/version in the index beside the built-in ones', () => {
    assert.deepEqual(Object.keys(openApiIndex(catalogue).paths), ['api/v1', KEY])
    assert.match(openApiIndex(catalogue).paths[KEY]!.serverRelativeURL, /^\/openapi\/v3\/apis\/stable\.example\.com\/v1\?hash=[0-9A-F]{16}$/)
  })

  it('has the collection, all-namespaces, item, status and scale paths with upstream operation ids', () => {
    const paths = at(v3(catalogue), 'paths') as Json
    assert.deepEqual(Object.keys(paths).sort(), [
      '/apis/stable.example.com/v1/crontabs',
      COLLECTION,
      ITEM,
      `${ITEM}/scale`,
      `${ITEM}/status`,
    ])
    assert.equal(at(paths, COLLECTION, 'get', 'operationId'), 'listStableExampleComV1NamespacedCronTab')
    assert.equal(at(paths, '/apis/stable.example.com/v1/crontabs', 'get', 'operationId'), 'listStableExampleComV1CronTabForAllNamespaces')
    assert.equal(at(paths, ITEM, 'patch', 'operationId'), 'patchStableExampleComV1NamespacedCronTab')
    assert.equal(at(paths, `${ITEM}/status`, 'put', 'operationId'), 'replaceStableExampleComV1NamespacedCronTabStatus')
    assert.equal(at(paths, `${ITEM}/scale`, 'get', 'operationId'), 'readStableExampleComV1NamespacedCronTabScale')
  })

  it('offers JSON patch, merge patch and apply on PATCH, never strategic merge, with the GVK and fieldValidation', () => {
    for (const path of [ITEM, `${ITEM}/status`, `${ITEM}/scale`]) {
      const patch = at(v3(catalogue), 'paths', path, 'patch') as Json
      assert.deepEqual(Object.keys(at(patch, 'requestBody', 'content') as Json), [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/apply-patch+yaml',
      ])
      assert.deepEqual(patch['x-kubernetes-group-version-kind'], CRONTAB_GVK, path)
      assert.ok((patch['parameters'] as Json[]).some((p) => p['name'] === 'fieldValidation'))
    }
    // the built-in kind beside it keeps strategic merge
    const cm = at(openApiDocument(catalogue, 'api/v1'), 'paths', '/api/v1/namespaces/{namespace}/configmaps/{name}', 'patch')
    assert.ok(Object.keys(at(cm, 'requestBody', 'content') as Json).includes('application/strategic-merge-patch+json'))
  })

  it('answers JSON and YAML only, the kind on reads and an autoscaling/v1 Scale on the scale subresource', () => {
    const get = at(v3(catalogue), 'paths', ITEM, 'get')
    assert.deepEqual(Object.keys(at(get, 'responses', '200', 'content') as Json), ['application/json', 'application/yaml'])
    assert.deepEqual(at(get, 'responses', '200', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/com.example.stable.v1.CronTab',
    })
    const list = at(v3(catalogue), 'paths', COLLECTION, 'get')
    assert.deepEqual(at(list, 'responses', '200', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/com.example.stable.v1.CronTabList',
    })
    const scale = at(v3(catalogue), 'paths', `${ITEM}/scale`, 'put')
    assert.deepEqual(at(scale, 'requestBody', 'content', 'application/json', 'schema'), {
      $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.Scale',
    })
  })

  it('leaves out the operations of verbs the entry lacks', () => {
    const readOnly = entry({ ...cronTabs, verbs: ['get', 'list', 'watch'], subresources: [] })
    const paths = at(v3(new Catalogue([readOnly])), 'paths') as Json
    assert.deepEqual(Object.keys(at(paths, COLLECTION) as Json).sort(), ['get', 'parameters'])
    assert.deepEqual(Object.keys(at(paths, ITEM) as Json).sort(), ['get', 'parameters'])
  })

  it('publishes the CRD schema as the kind, with apiVersion, kind, ObjectMeta and the GVK added', () => {
    const schema = at(v3(catalogue), 'components', 'schemas', 'com.example.stable.v1.CronTab') as Json
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [CRONTAB_GVK])
    assert.equal(schema['type'], 'object')
    assert.deepEqual(at(schema, 'properties', 'metadata'), { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' })
    assert.deepEqual(at(schema, 'properties', 'apiVersion'), { type: 'string' })
    assert.deepEqual(at(schema, 'properties', 'kind'), { type: 'string' })
    const spec = at(schema, 'properties', 'spec') as Json
    assert.deepEqual(spec['required'], ['cronSpec', 'note'])
    assert.deepEqual(spec['x-kubernetes-validations'], [{ rule: 'self.replicas <= 10', message: 'too many' }])
    assert.deepEqual(at(spec, 'properties', 'cronSpec'), { type: 'string', description: 'when it runs', pattern: '^\\S+$' })
    assert.deepEqual(at(spec, 'properties', 'replicas'), { type: 'integer', format: 'int32', maximum: 10, minimum: 1 })
    assert.deepEqual(at(spec, 'properties', 'ports', 'x-kubernetes-list-map-keys'), ['name'])
    assert.equal(at(spec, 'properties', 'ports', 'x-kubernetes-list-type'), 'map')
  })

  it('keeps what v3 can say: nullable, defaults, anyOf, int-or-string spelled out, unknown fields next to known ones', () => {
    const spec = at(v3(catalogue), 'components', 'schemas', 'com.example.stable.v1.CronTab', 'properties', 'spec', 'properties') as Json
    assert.deepEqual(spec['note'], { type: 'string', nullable: true })
    assert.deepEqual(spec['image'], { type: 'string', default: 'busybox' })
    assert.deepEqual(spec['mode'], { type: 'string', anyOf: [{ enum: ['fast'] }, { enum: ['slow'] }] })
    assert.deepEqual(spec['port'], { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] })
    assert.deepEqual(spec['extra'], {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { known: { type: 'string' } },
    })
  })

  it('gives an embedded resource apiVersion, kind and metadata, kind and apiVersion required', () => {
    const template = at(v3(catalogue), 'components', 'schemas', 'com.example.stable.v1.CronTab', 'properties', 'spec', 'properties', 'template') as Json
    assert.deepEqual(Object.keys(template['properties'] as Json).sort(), ['apiVersion', 'kind', 'metadata', 'spec'])
    assert.deepEqual(template['required'], ['kind', 'apiVersion'])
    assert.deepEqual(at(template, 'properties', 'spec'), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true })
  })

  it('describes the list kind with items of the kind and ListMeta, under the CRD’s list kind name', () => {
    const schemas = at(v3(catalogue), 'components', 'schemas') as Json
    assert.deepEqual(schemas['com.example.stable.v1.CronTabList'], {
      required: ['items'],
      properties: {
        apiVersion: { type: 'string' },
        items: { type: 'array', items: { $ref: '#/components/schemas/com.example.stable.v1.CronTab' } },
        kind: { type: 'string' },
        metadata: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta' },
      },
      'x-kubernetes-group-version-kind': [{ ...CRONTAB_GVK, kind: 'CronTabList' }],
    })
    const collection = entry({ ...cronTabs, listKind: 'CronTabCollection' })
    const named = at(v3(new Catalogue([collection])), 'components', 'schemas') as Json
    assert.ok(named['com.example.stable.v1.CronTabCollection'])
    assert.equal(named['com.example.stable.v1.CronTabList'], undefined)
  })

  it('is self-contained: ObjectMeta, ListMeta, Scale, Status and every other $ref target are in the document', () => {
    const doc = v3(catalogue)
    const schemas = at(doc, 'components', 'schemas') as Json
    for (const name of [
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
      'io.k8s.api.autoscaling.v1.Scale',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
    ]) {
      assert.ok(schemas[name], name)
    }
    assert.equal(schemas['io.k8s.api.core.v1.ConfigMap'], undefined)
    for (const [, name] of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      assert.ok(schemas[name!], `dangling $ref ${name}`)
    }
  })

  it('names operations of groups outside k8s.io as upstream does (only .k8s.io is dropped)', () => {
    const certs = entry({ group: 'cert-manager.io', kind: 'Certificate', resource: 'certificates', typeName: 'io.cert-manager.v1.Certificate', schema: { type: 'object' } })
    const doc = openApiDocument(new Catalogue([certs]), 'apis/cert-manager.io/v1')
    assert.equal(at(doc, 'paths', '/apis/cert-manager.io/v1/namespaces/{namespace}/certificates', 'get', 'operationId'), 'listCertManagerIoV1NamespacedCertificate')
  })
})

describe('OpenAPI v2 for a custom resource', () => {
  const catalogue = new Catalogue([configmaps, cronTabs])
  const definitions = (c: Catalogue): Json => at(openApiV2Document(c).doc, 'definitions') as Json

  it('carries the kind and list definitions, referring to #/definitions', () => {
    const defs = definitions(catalogue)
    const schema = defs['com.example.stable.v1.CronTab'] as Json
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [CRONTAB_GVK])
    assert.deepEqual(at(schema, 'properties', 'metadata'), { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' })
    assert.deepEqual(at(defs, 'com.example.stable.v1.CronTabList', 'properties', 'items', 'items'), {
      $ref: '#/definitions/com.example.stable.v1.CronTab',
    })
    assert.ok(defs['io.k8s.api.core.v1.ConfigMap'])
    assert.ok(defs['io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta'])
  })

  it('drops what kubectl’s v2 reader cannot take: nullable, junctors, defaults, types and properties of open objects', () => {
    const spec = at(definitions(catalogue), 'com.example.stable.v1.CronTab', 'properties', 'spec') as Json
    // a nullable field loses its type and is no longer required
    assert.deepEqual(spec['required'], ['cronSpec'])
    assert.deepEqual(at(spec, 'properties', 'note'), {})
    assert.deepEqual(at(spec, 'properties', 'image'), { type: 'string' })
    assert.deepEqual(at(spec, 'properties', 'mode'), { type: 'string' })
    assert.deepEqual(at(spec, 'properties', 'port'), { 'x-kubernetes-int-or-string': true })
    assert.deepEqual(at(spec, 'properties', 'extra'), { 'x-kubernetes-preserve-unknown-fields': true })
    assert.deepEqual(spec['x-kubernetes-validations'], [{ rule: 'self.replicas <= 10', message: 'too many' }])
    const template = at(spec, 'properties', 'template') as Json
    assert.deepEqual(at(template, 'properties', 'spec'), { 'x-kubernetes-preserve-unknown-fields': true })
    assert.deepEqual(template['required'], ['kind', 'apiVersion'])
  })

  it('publishes a root that keeps unknown fields as a bare object with its GVK', () => {
    const open = entry({ ...cronTabs, schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { spec: { type: 'object' } } } })
    assert.deepEqual(definitions(new Catalogue([open]))['com.example.stable.v1.CronTab'], {
      type: 'object',
      'x-kubernetes-group-version-kind': [CRONTAB_GVK],
    })
    // v3 keeps the schema with its properties
    const schema = at(openApiDocument(new Catalogue([open]), KEY), 'components', 'schemas', 'com.example.stable.v1.CronTab') as Json
    assert.deepEqual(Object.keys(schema['properties'] as Json).sort(), ['apiVersion', 'kind', 'metadata', 'spec'])
  })

  it('consumes the three patch types on the custom resource’s PATCH, JSON and YAML on create', () => {
    const paths = at(openApiV2Document(catalogue).doc, 'paths') as Json
    assert.deepEqual(at(paths, ITEM, 'patch', 'consumes'), [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ])
    assert.deepEqual(at(paths, COLLECTION, 'post', 'consumes'), ['application/json', 'application/yaml'])
    assert.deepEqual(at(paths, COLLECTION, 'post', 'parameters', '0'), {
      name: 'body',
      in: 'body',
      required: true,
      schema: { $ref: '#/definitions/com.example.stable.v1.CronTab' },
    })
  })

  it('has no dangling $ref', () => {
    const doc = openApiV2Document(catalogue).doc
    const defs = at(doc, 'definitions') as Json
    for (const [, name] of JSON.stringify(doc).matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)) {
      assert.ok(defs[name!], `dangling $ref ${name}`)
    }
    assert.doesNotMatch(JSON.stringify(doc), /#\/components\//)
  })
})
