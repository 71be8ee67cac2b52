/**
 * Binding pods to nodes as a scheduler does: `pods/<name>/binding` and the
 * legacy `bindings` collection set spec.nodeName, the Binding's annotations
 * and the PodScheduled condition; a pod already bound is a 409 and stays as
 * it was; a Binding that names another pod, or no node, is refused and
 * changes nothing.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const POD = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
})
const BINDING = (name: string, node: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name, ...extra },
  target: { apiVersion: 'v1', kind: 'Node', name: node },
})

describe('pod bindings', () => {
  let client: TestClient
  const pods = '/api/v1/namespaces/default/pods'

  before(async () => {
    client = await startServer()
    for (const name of ['web', 'legacy', 'bound', 'other', 'untargeted']) assert.equal((await client.post(pods, POD(name))).status, 201)
  })

  it('binds a pod through pods/NAME/binding: 201 Success, the node, the annotations and PodScheduled True', async () => {
    const reply = await client.post(`${pods}/web/binding`, BINDING('web', 'node-1', { annotations: { 'scheduler.example/score': '7' } }))
    assert.equal(reply.status, 201, reply.text)
    assert.equal(reply.body.kind, 'Status')
    assert.equal(reply.body.status, 'Success')
    const pod = (await client.get(`${pods}/web`)).body
    assert.equal(pod.spec.nodeName, 'node-1')
    assert.equal(pod.metadata.annotations['scheduler.example/score'], '7')
    const scheduled = pod.status.conditions.find((c: { type: string }) => c.type === 'PodScheduled')
    assert.equal(scheduled.status, 'True')
  })

  it('binds a pod through the legacy bindings collection', async () => {
    const reply = await client.post('/api/v1/namespaces/default/bindings', BINDING('legacy', 'node-2'))
    assert.equal(reply.status, 201, reply.text)
    assert.equal((await client.get(`${pods}/legacy`)).body.spec.nodeName, 'node-2')
  })

  it('refuses to bind a pod already bound with 409 Conflict, and the pod keeps its node', async () => {
    assert.equal((await client.post(`${pods}/bound/binding`, BINDING('bound', 'node-1'))).status, 201)
    const before = (await client.get(`${pods}/bound`)).body
    const reply = await client.post(`${pods}/bound/binding`, BINDING('bound', 'node-9'))
    assert.equal(reply.status, 409)
    assert.equal(reply.body.reason, 'Conflict')
    assert.equal(reply.body.message, 'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-1"')
    const after = (await client.get(`${pods}/bound`)).body
    assert.equal(after.spec.nodeName, 'node-1')
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion)
  })

  it('refuses a Binding whose name is not the pod in the URL with 400, and binds nothing', async () => {
    const reply = await client.post(`${pods}/other/binding`, BINDING('web', 'node-3'))
    assert.equal(reply.status, 400)
    assert.equal(reply.body.message, 'name in URL does not match name in Binding object')
    assert.equal((await client.get(`${pods}/other`)).body.spec.nodeName, undefined)
  })

  it('refuses a Binding without a target node, and binds nothing', async () => {
    const reply = await client.post(`${pods}/untargeted/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'untargeted' }, target: { kind: 'Pod' } })
    assert.equal(reply.status, 500)
    assert.equal(reply.body.message, '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]')
    assert.equal((await client.get(`${pods}/untargeted`)).body.spec.nodeName, undefined)
  })

  it('answers 404 for a pod that does not exist', async () => {
    const reply = await client.post(`${pods}/ghost/binding`, BINDING('ghost', 'node-1'))
    assert.equal(reply.status, 404)
    assert.equal(reply.body.message, 'pods "ghost" not found')
  })

  it('a dry run checks everything and binds nothing', async () => {
    assert.equal((await client.post(`${pods}/other/binding?dryRun=All`, BINDING('other', 'node-4'))).status, 201)
    assert.equal((await client.get(`${pods}/other`)).body.spec.nodeName, undefined)
  })
})
