import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const MERGE = 'application/merge-patch+json'

const deployment = (name: string) => ({
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
})

describe('dryRun=All on every mutating verb', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    assert.equal((await client.post(CM, { metadata: { name: 'kept', labels: { a: '1' } }, data: { k: 'v' } })).status, 201)
    assert.equal((await client.post(DEPLOYS, deployment('web'))).status, 201)
  })

  const stored = async (path: string) => (await client.get(path)).body

  it('create: validates, defaults and answers the would-be object, stores nothing', async () => {
    const res = await client.post(`${DEPLOYS}?dryRun=All`, deployment('dry'))
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.metadata.name, 'dry')
    assert.ok(res.body.metadata.uid)
    assert.equal(res.body.spec.template.spec.restartPolicy, 'Always', 'defaulted')
    assert.equal((await client.get(`${DEPLOYS}/dry`)).status, 404)
    const invalid = await client.post(`${CM}?dryRun=All`, { metadata: { name: 'Bad_Name' } })
    assert.equal(invalid.status, 422, 'validation runs as for a real create')
  })

  it('update and patch: answer the changed object, keep the stored one', async () => {
    const before = await stored(`${CM}/kept`)
    const put = await client.put(`${CM}/kept?dryRun=All`, { ...before, data: { k: 'changed' } })
    assert.equal(put.status, 200, put.text)
    assert.deepEqual(put.body.data, { k: 'changed' })
    const patch = await client.patch(`${CM}/kept?dryRun=All`, { metadata: { labels: { b: '2' } } }, MERGE)
    assert.equal(patch.status, 200, patch.text)
    assert.deepEqual(patch.body.metadata.labels, { a: '1', b: '2' })
    assert.deepEqual(await stored(`${CM}/kept`), before)
  })

  it('status and scale: answer the change, keep the stored object', async () => {
    const before = await stored(`${DEPLOYS}/web`)
    const status = await client.patch(`${DEPLOYS}/web/status?dryRun=All`, { status: { replicas: 7 } }, MERGE)
    assert.equal(status.status, 200, status.text)
    assert.equal(status.body.status.replicas, 7)
    const scale = await client.patch(`${DEPLOYS}/web/scale?dryRun=All`, { spec: { replicas: 5 } }, MERGE)
    assert.equal(scale.status, 200, scale.text)
    assert.equal(scale.body.spec.replicas, 5)
    assert.deepEqual(await stored(`${DEPLOYS}/web`), before)
  })

  it('delete and deletecollection: answer as if deleted, delete nothing', async () => {
    const del = await client.delete(`${CM}/kept?dryRun=All`)
    assert.equal(del.status, 200, del.text)
    assert.equal(del.body.status, 'Success')
    const all = await client.delete(`${CM}?dryRun=All`)
    assert.equal(all.status, 200, all.text)
    assert.ok(all.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'kept'))
    assert.equal((await client.get(`${CM}/kept`)).status, 200)
  })

  it('refuses a dry run option other than All on each write, as its options kind, and stores nothing', async () => {
    const before = await stored(`${CM}/kept`)
    const create = await client.post(`${CM}?dryRun=Some`, { metadata: { name: 'x' } })
    assert.equal(create.status, 422)
    assert.equal(create.body.message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"')
    assert.equal(create.body.details.causes[0].field, 'dryRun')
    assert.equal((await client.get(`${CM}/x`)).status, 404)
    const update = await client.put(`${CM}/kept?dryRun=All&dryRun=Later`, { ...before, data: { k: 'changed' } })
    assert.equal(update.status, 422)
    assert.equal(update.body.message, 'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Later"}: supported values: "All"')
    const patch = await client.patch(`${CM}/kept?dryRun=`, { data: { k: 'changed' } }, MERGE)
    assert.equal(patch.status, 422)
    assert.equal(patch.body.message, 'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{""}: supported values: "All"')
    const del = await client.delete(`${CM}/kept?dryRun=Some`)
    assert.equal(del.status, 422)
    assert.equal(del.body.message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"')
    assert.deepEqual(await stored(`${CM}/kept`), before)
  })

  it('refuses a field manager that is too long or not printable, and stores nothing', async () => {
    const long = await client.post(`${CM}?fieldManager=${'m'.repeat(129)}`, { metadata: { name: 'x' } })
    assert.equal(long.status, 422)
    assert.equal(long.body.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes')
    const tab = await client.post(`${CM}?fieldManager=a%09b`, { metadata: { name: 'x' } })
    assert.equal(tab.status, 422)
    assert.equal(tab.body.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)')
    assert.equal((await client.get(`${CM}/x`)).status, 404)
  })
})
