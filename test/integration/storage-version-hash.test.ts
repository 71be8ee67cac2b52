/**
 * storageVersionHash in legacy discovery, as kubectl get --raw /api/v1 shows
 * it: upstream's value for each stored resource, the storage version's for
 * every served version, none for what is not stored or for subresources,
 * and a custom resource's following its definition's storage version.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { before, describe, it } from 'node:test'
import { CRDS, installDefinition } from './crd-fixtures.js'
import { eventually, startServer, type TestClient } from './harness.js'

/** An independent reckoning of upstream's hash, to compare the server's with. */
const expectedHash = (gvk: string) => createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64')

type Resource = { name: string; storageVersionHash?: string }

async function resources(api: TestClient, path: string): Promise<Map<string, Resource>> {
  const res = await api.get(path)
  assert.equal(res.status, 200, res.text)
  return new Map((res.body.resources as Resource[]).map((r) => [r.name, r]))
}

const openSchema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }
const version = (name: string, storage: boolean) => ({ name, served: true, storage, schema: openSchema })

describe('storageVersionHash in discovery', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('shows upstream’s hash for stored core resources and none for bindings, component statuses or subresources', async () => {
    const core = await resources(api, '/api/v1')
    assert.equal(core.get('pods')?.storageVersionHash, 'xPOwRZ+Yhw8=')
    assert.equal(core.get('configmaps')?.storageVersionHash, 'qFsyl6wFWjQ=')
    assert.equal(core.get('nodes')?.storageVersionHash, 'XwShjMxG9Fs=')
    for (const name of ['bindings', 'componentstatuses', 'pods/status', 'pods/eviction'])
      assert.equal(core.get(name)?.storageVersionHash, undefined, name)
    assert.ok(core.has('bindings') && core.has('pods/status'))
  })

  it('gives every version of a resource its storage version’s hash, and access reviews none', async () => {
    assert.equal((await resources(api, '/apis/events.k8s.io/v1')).get('events')?.storageVersionHash, 'r2yiGXH7wu8=')
    assert.equal((await resources(api, '/apis/autoscaling/v1')).get('horizontalpodautoscalers')?.storageVersionHash, 'qwQve8ut294=')
    assert.equal((await resources(api, '/apis/autoscaling/v2')).get('horizontalpodautoscalers')?.storageVersionHash, 'qwQve8ut294=')
    assert.equal((await resources(api, '/apis/authorization.k8s.io/v1')).get('subjectaccessreviews')?.storageVersionHash, undefined)
  })

  it('follows a custom resource definition’s storage version in each served version', async () => {
    const name = 'gadgets.hashes.example.com'
    const spec = (versions: unknown[]) => ({ group: 'hashes.example.com', scope: 'Namespaced', names: { plural: 'gadgets', kind: 'Gadget' }, versions })
    const definition = { metadata: { name }, spec: spec([version('v1', true), version('v1beta1', false)]) }
    await installDefinition(api, definition)
    const v1 = expectedHash('hashes.example.com/v1/Gadget')
    assert.equal((await resources(api, '/apis/hashes.example.com/v1')).get('gadgets')?.storageVersionHash, v1)
    assert.equal((await resources(api, '/apis/hashes.example.com/v1beta1')).get('gadgets')?.storageVersionHash, v1)

    const crd = (await api.get(`${CRDS}/${name}`)).body
    crd.spec.versions = [version('v1', false), version('v1beta1', true)]
    assert.equal((await api.put(`${CRDS}/${name}`, crd)).status, 200)
    const v1beta1 = expectedHash('hashes.example.com/v1beta1/Gadget')
    await eventually('discovery shows the new storage version', async () => {
      return (await resources(api, '/apis/hashes.example.com/v1')).get('gadgets')?.storageVersionHash === v1beta1
    })
    assert.equal((await resources(api, '/apis/hashes.example.com/v1beta1')).get('gadgets')?.storageVersionHash, v1beta1)
  })

  it('keeps aggregated discovery to upstream’s shape, which has no storageVersionHash', async () => {
    const res = await api.get('/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })
    assert.equal(res.status, 200, res.text)
    const pods = res.body.items[0].versions[0].resources.find((r: { resource: string }) => r.resource === 'pods')
    assert.ok(pods)
    assert.equal('storageVersionHash' in pods, false)
  })
})
