import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openApiDocument, openApiHash, openApiIndex } from '../../../core/api/openapi.js'
import { openApiV2Document } from '../../../core/api/openapi-v2.js'
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
const deployments = entry({ group: 'apps', kind: 'Deployment', resource: 'deployments', typeName: 'io.k8s.api.apps.v1.Deployment' })

function cronTab(version: string, specProperties: Record<string, { type: string }>): ResourceEntry {
  return entry({
    group: 'stable.example.com',
    version,
    kind: 'CronTab',
    resource: 'crontabs',
    typeName: `com.example.stable.${version}.CronTab`,
    schema: { type: 'object', properties: { spec: { type: 'object', properties: specProperties } } },
  })
}

const CR_KEY = 'apis/stable.example.com/v1'
const v2Definitions = (c: Catalogue): Json => openApiV2Document(c).doc['definitions'] as Json

describe('OpenAPI documents as custom resources come and go', () => {
  it('lists a new group/version at once and drops it when its last resource goes', () => {
    const catalogue = new Catalogue([configmaps, deployments])
    assert.deepEqual(Object.keys(openApiIndex(catalogue).paths), ['api/v1', 'apis/apps/v1'])
    const v1 = cronTab('v1', { cronSpec: { type: 'string' } })

    catalogue.replace([], [v1])
    assert.deepEqual(Object.keys(openApiIndex(catalogue).paths), ['api/v1', 'apis/apps/v1', CR_KEY])
    assert.ok(openApiDocument(catalogue, CR_KEY))

    catalogue.replace([v1], [])
    assert.deepEqual(Object.keys(openApiIndex(catalogue).paths), ['api/v1', 'apis/apps/v1'])
    assert.equal(openApiDocument(catalogue, CR_KEY), undefined)
    assert.equal(openApiHash(catalogue, CR_KEY), undefined)
  })

  it('keeps the documents and hashes of group/versions a change did not touch', () => {
    const catalogue = new Catalogue([configmaps, deployments])
    const coreDoc = openApiDocument(catalogue, 'api/v1')
    const coreHash = openApiHash(catalogue, 'api/v1')
    const appsHash = openApiHash(catalogue, 'apis/apps/v1')
    const v1 = cronTab('v1', { cronSpec: { type: 'string' } })

    catalogue.replace([], [v1])
    // the very same document: not rebuilt
    assert.equal(openApiDocument(catalogue, 'api/v1'), coreDoc)
    assert.equal(openApiHash(catalogue, 'apis/apps/v1'), appsHash)
    catalogue.replace([v1], [])
    assert.equal(openApiHash(catalogue, 'api/v1'), coreHash)
    assert.equal(openApiDocument(catalogue, 'api/v1'), coreDoc)
  })

  it('changes the hash of the custom resource’s group/version when its schema changes, and only then', () => {
    const catalogue = new Catalogue([configmaps])
    catalogue.replace([], [cronTab('v1', { cronSpec: { type: 'string' } })])
    const before = openApiIndex(catalogue).paths[CR_KEY]!.serverRelativeURL

    // the same definition again (say, the CRD's status changed): same content, same hash
    catalogue.replace([], [cronTab('v1', { cronSpec: { type: 'string' } })])
    assert.equal(openApiIndex(catalogue).paths[CR_KEY]!.serverRelativeURL, before)

    catalogue.replace([], [cronTab('v1', { cronSpec: { type: 'string' }, image: { type: 'string' } })])
    const after = openApiIndex(catalogue).paths[CR_KEY]!.serverRelativeURL
    assert.notEqual(after, before)
    const spec = (openApiDocument(catalogue, CR_KEY) as Json)['components'] as Json
    assert.deepEqual(Object.keys(((spec['schemas'] as Json)['com.example.stable.v1.CronTab'] as { properties: { spec: { properties: Json } } }).properties.spec.properties), [
      'cronSpec',
      'image',
    ])
  })

  it('documents each served version of a custom resource in its own group/version', () => {
    const catalogue = new Catalogue([configmaps])
    catalogue.replace([], [cronTab('v1', { cronSpec: { type: 'string' } }), cronTab('v2', { schedule: { type: 'string' } })])
    assert.deepEqual(Object.keys(openApiIndex(catalogue).paths), ['api/v1', CR_KEY, 'apis/stable.example.com/v2'])
    const v2doc = openApiDocument(catalogue, 'apis/stable.example.com/v2') as { components: { schemas: Json } }
    assert.ok(v2doc.components.schemas['com.example.stable.v2.CronTab'])
    assert.equal(v2doc.components.schemas['com.example.stable.v1.CronTab'], undefined)
  })

  it('changes the /openapi/v2 ETag and definitions when a custom resource comes and restores them when it goes', () => {
    const catalogue = new Catalogue([configmaps, deployments])
    const first = openApiV2Document(catalogue)
    assert.equal(openApiV2Document(catalogue), first, 'built once while nothing changes')
    assert.equal(v2Definitions(catalogue)['com.example.stable.v1.CronTab'], undefined)
    const v1 = cronTab('v1', { cronSpec: { type: 'string' } })

    catalogue.replace([], [v1])
    const withCr = openApiV2Document(catalogue)
    assert.notEqual(withCr.etag, first.etag)
    assert.ok(v2Definitions(catalogue)['com.example.stable.v1.CronTab'])
    assert.ok((withCr.doc['paths'] as Json)['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'])

    catalogue.replace([v1], [])
    const without = openApiV2Document(catalogue)
    assert.equal(without.etag, first.etag)
    assert.equal(v2Definitions(catalogue)['com.example.stable.v1.CronTab'], undefined)
    assert.equal((without.doc['paths'] as Json)['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'], undefined)
    assert.deepEqual(without.doc, first.doc)
  })

  it('keeps every GVK tag of a type that several group/versions serve in the merged v2 document', () => {
    // the same Go type served under a second group: each group/version's document tags it with its own GVK
    const mirrored = entry({ group: 'mirror.example.com', kind: 'ConfigMap', resource: 'configmaps', typeName: 'io.k8s.api.core.v1.ConfigMap' })
    const catalogue = new Catalogue([configmaps, mirrored])
    const tags = (v2Definitions(catalogue)['io.k8s.api.core.v1.ConfigMap'] as Json)['x-kubernetes-group-version-kind']
    assert.deepEqual(tags, [
      { group: '', version: 'v1', kind: 'ConfigMap' },
      { group: 'mirror.example.com', version: 'v1', kind: 'ConfigMap' },
    ])
  })
})
