/**
 * Metadata-only answers, as client-go's metadata clients ask for them (the
 * garbage collector's and metadata informers' Accept headers, protobuf
 * first, then JSON, then plain JSON): one object as a PartialObjectMetadata,
 * a list as a PartialObjectMetadataList, a watch's objects each as a
 * PartialObjectMetadata; a list asked for as one object, or one object as
 * a list, refused with upstream's 406 naming the stored Go type.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { cronTab, cronTabDefinition, installDefinition } from './crd-fixtures.js'
import { readEvents, startServer, type TestClient } from './harness.js'

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments'
const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs'
const asMeta = (kind: string, version = 'v1') => `application/json;as=${kind};g=meta.k8s.io;v=${version}`
/** What client-go's metadata client sends for a list (and, with PartialObjectMetadata, for a get or a watch). */
const metadataClientAccept = (kind: string) => `application/vnd.kubernetes.protobuf;as=${kind};g=meta.k8s.io;v=v1,${asMeta(kind)},application/json`

describe('PartialObjectMetadata answers', () => {
  let api: TestClient
  let stored: any
  before(async () => {
    api = await startServer()
    const created = await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'meta-only', labels: { app: 'x' } }, data: { big: 'y'.repeat(1000) } })
    assert.equal(created.status, 201, created.text)
    stored = created.body
  })

  it('answers one object as its metadata, for the metadata client and for v1beta1', async () => {
    const res = await api.get(`${CONFIGMAPS}/meta-only`, { headers: { accept: metadataClientAccept('PartialObjectMetadata') } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: stored.metadata })
    const beta = await api.get(`${CONFIGMAPS}/meta-only`, { headers: { accept: asMeta('PartialObjectMetadata', 'v1beta1') } })
    assert.equal(beta.body.apiVersion, 'meta.k8s.io/v1beta1')
    assert.equal(beta.body.data, undefined)
  })

  it('answers a list as a PartialObjectMetadataList whose items name their kind', async () => {
    const res = await api.get(`${CONFIGMAPS}?labelSelector=app%3Dx`, { headers: { accept: metadataClientAccept('PartialObjectMetadataList') } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.kind, 'PartialObjectMetadataList')
    assert.equal(res.body.apiVersion, 'meta.k8s.io/v1')
    assert.match(res.body.metadata.resourceVersion, /^\d+$/)
    assert.deepEqual(res.body.items, [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: stored.metadata }])
    // None found: upstream's list of none has Go's nil items, written null.
    const none = await api.get(`${CONFIGMAPS}?labelSelector=app%3Dnone`, { headers: { accept: asMeta('PartialObjectMetadataList') } })
    assert.match(none.text, /,"items":null}\n$/)
    // A page keeps its continue token.
    assert.equal((await api.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'second' } })).status, 201)
    const page = await api.get(`${CONFIGMAPS}?limit=1`, { headers: { accept: asMeta('PartialObjectMetadataList') } })
    assert.equal(page.body.items.length, 1)
    assert.ok(page.body.metadata.continue, page.text)
  })

  it('refuses a list asked for as one object, and one object as a list, naming the Go type', async () => {
    const list = await api.get(CONFIGMAPS, { headers: { accept: asMeta('PartialObjectMetadata') } })
    assert.equal(list.status, 406)
    assert.deepEqual(list.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)',
      reason: 'NotAcceptable',
      code: 406,
    })
    const one = await api.get(`${CONFIGMAPS}/meta-only`, { headers: { accept: asMeta('PartialObjectMetadataList') } })
    assert.equal(one.body.message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)')
    const deployments = await api.get(DEPLOYMENTS, { headers: { accept: asMeta('PartialObjectMetadata') } })
    assert.equal(deployments.body.message, 'you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)')
  })

  it("answers a write with the written object's metadata", async () => {
    const res = await api.post(`${CONFIGMAPS}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' }, data: { a: '1' } }, { headers: { accept: asMeta('PartialObjectMetadata') } })
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.kind, 'PartialObjectMetadata')
    assert.equal(res.body.metadata.name, 'dry')
  })

  it("streams each watch event's object as its metadata", async () => {
    const res = await api.server.fetch(
      new Request(`http://in-process${CONFIGMAPS}?watch=1&resourceVersion=0&labelSelector=app%3Dx`, { headers: { accept: metadataClientAccept('PartialObjectMetadata') } }),
    )
    assert.equal(res.status, 200)
    const [added] = await readEvents(res, 1)
    assert.equal(added!.type, 'ADDED')
    assert.deepEqual(added!.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: stored.metadata })
  })
})

describe('PartialObjectMetadata of custom resources', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    await installDefinition(api, cronTabDefinition())
    assert.equal((await api.post(CRONTABS, cronTab('mine'))).status, 201)
  })

  it('answers the list, and names the unstructured list when it is asked for as one object', async () => {
    const list = await api.get(CRONTABS, { headers: { accept: asMeta('PartialObjectMetadataList') } })
    assert.equal(list.status, 200, list.text)
    assert.deepEqual(
      list.body.items.map((i: any) => [i.kind, i.metadata.name, i.spec]),
      [['PartialObjectMetadata', 'mine', undefined]],
    )
    const one = await api.get(CRONTABS, { headers: { accept: asMeta('PartialObjectMetadata') } })
    assert.equal(one.body.message, 'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)')
  })
})
