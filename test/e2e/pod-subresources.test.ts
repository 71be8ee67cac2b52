/**
 * The pod subresources a scheduler and `kubectl debug` use, against the
 * daemon with kubectl: `kubectl debug` adds an ephemeral container through
 * pods/ephemeralcontainers, and a Binding posted to pods/NAME/binding binds
 * the pod once (a second binding is 409 and the pod keeps its node).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

describe('pod subresources with kubectl', () => {
  let daemon: Daemon

  before(async () => {
    daemon = await Daemon.start()
    await daemon.ok('run', 'app', '--image=nginx', '--restart=Never')
  })

  after(async () => {
    await daemon?.stop()
  })

  it('kubectl debug adds an ephemeral container targeting the pod container', async () => {
    await daemon.ok('debug', 'app', '--image=busybox', '--container=debugger', '--target=app')
    const names = await daemon.ok('get', 'pod', 'app', '-o', 'jsonpath={.spec.ephemeralContainers[*].name}')
    assert.equal(names, 'debugger')
    assert.equal(await daemon.ok('get', 'pod', 'app', '-o', 'jsonpath={.spec.ephemeralContainers[0].targetContainerName}'), 'app')
    assert.equal(await daemon.ok('get', 'pod', 'app', '-o', 'jsonpath={.spec.containers[*].name}'), 'app', 'the pod containers are unchanged')
  })

  it('binds the pod through pods/NAME/binding once; a second binding is 409 and the pod keeps its node', async () => {
    const binding = (node: string) =>
      daemon.manifest(`binding-${node}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'app' }, target: { kind: 'Node', name: node } }))
    const first = await daemon.ok('create', '--raw', '/api/v1/namespaces/default/pods/app/binding', '-f', binding('node-a'))
    assert.equal(JSON.parse(first).status, 'Success')
    assert.equal(await daemon.ok('get', 'pod', 'app', '-o', 'jsonpath={.spec.nodeName}'), 'node-a')
    const second = await daemon.kubectl('create', '--raw', '/api/v1/namespaces/default/pods/app/binding', '-f', binding('node-b'))
    assert.notEqual(second.code, 0)
    assert.match(second.stderr, /Operation cannot be fulfilled on pods\/binding "app": pod app is already assigned to node "node-a"/)
    assert.equal(await daemon.ok('get', 'pod', 'app', '-o', 'jsonpath={.spec.nodeName}'), 'node-a')
  })
})
