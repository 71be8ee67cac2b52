/**
 * `pods/<name>/ephemeralcontainers`, as `kubectl debug` writes it: a write
 * adds ephemeral containers and changes nothing else of the pod; an existing
 * ephemeral container changed or removed is 422 and nothing is stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const path = '/api/v1/namespaces/default/pods/app/ephemeralcontainers'
const debuggerContainer = { name: 'debugger', image: 'busybox', stdin: true, tty: true, targetContainerName: 'main' }

describe('pods/NAME/ephemeralcontainers', () => {
  let client: TestClient

  before(async () => {
    client = await startServer()
    const created = await client.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app' },
      spec: { containers: [{ name: 'main', image: 'nginx' }] },
    })
    assert.equal(created.status, 201, created.text)
  })

  it('adds an ephemeral container with a strategic merge patch, as kubectl debug sends it', async () => {
    const reply = await client.patch(path, { spec: { ephemeralContainers: [debuggerContainer] } }, 'application/strategic-merge-patch+json')
    assert.equal(reply.status, 200, reply.text)
    assert.equal(reply.body.kind, 'Pod')
    const pod = (await client.get(path)).body
    assert.equal(pod.spec.ephemeralContainers.length, 1)
    assert.equal(pod.spec.ephemeralContainers[0].name, 'debugger')
    assert.equal(pod.spec.ephemeralContainers[0].terminationMessagePolicy, 'File', 'defaulted as any container')
  })

  it('keeps everything but the ephemeral containers as stored', async () => {
    const pod = (await client.get('/api/v1/namespaces/default/pods/app')).body
    pod.spec.containers[0].image = 'evil'
    pod.metadata.labels = { changed: 'yes' }
    pod.spec.ephemeralContainers.push({ name: 'second', image: 'busybox' })
    const reply = await client.put(path, pod)
    assert.equal(reply.status, 200, reply.text)
    const stored = (await client.get('/api/v1/namespaces/default/pods/app')).body
    assert.equal(stored.spec.containers[0].image, 'nginx')
    assert.equal(stored.metadata.labels?.['changed'], undefined)
    assert.deepEqual(
      stored.spec.ephemeralContainers.map((c: { name: string }) => c.name),
      ['debugger', 'second'],
    )
  })

  it('refuses to change an existing ephemeral container with 422, and stores nothing', async () => {
    const pod = (await client.get(path)).body
    pod.spec.ephemeralContainers[0].image = 'other'
    const reply = await client.put(path, pod)
    assert.equal(reply.status, 422, reply.text)
    assert.equal(reply.body.reason, 'Invalid')
    assert.match(reply.body.message, /spec\.ephemeralContainers\[debugger\]: Forbidden: existing ephemeral containers "debugger" may not be changed/)
    const stored = (await client.get(path)).body
    assert.equal(stored.spec.ephemeralContainers[0].image, 'busybox')
    assert.equal(stored.metadata.resourceVersion, pod.metadata.resourceVersion)
  })

  it('refuses to remove an existing ephemeral container with 422, and stores nothing', async () => {
    const pod = (await client.get(path)).body
    pod.spec.ephemeralContainers = pod.spec.ephemeralContainers.slice(1)
    const reply = await client.put(path, pod)
    assert.equal(reply.status, 422, reply.text)
    assert.match(reply.body.message, /spec\.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed/)
    assert.equal((await client.get(path)).body.spec.ephemeralContainers.length, 2)
  })

  it('validates a new ephemeral container as upstream: no ports', async () => {
    const pod = (await client.get(path)).body
    pod.spec.ephemeralContainers.push({ name: 'ported', image: 'busybox', ports: [{ containerPort: 80 }] })
    const reply = await client.put(path, pod)
    assert.equal(reply.status, 422, reply.text)
    assert.match(reply.body.message, /spec\.ephemeralContainers\[2\]\.ports: Forbidden: cannot be set for an Ephemeral Container/)
    assert.equal((await client.get(path)).body.spec.ephemeralContainers.length, 2)
  })

  it('refuses a target container that the pod does not have with 422', async () => {
    const pod = (await client.get(path)).body
    pod.spec.ephemeralContainers.push({ name: 'lost', image: 'busybox', targetContainerName: 'nope' })
    const reply = await client.put(path, pod)
    assert.equal(reply.status, 422, reply.text)
    assert.match(reply.body.message, /spec\.ephemeralContainers\[2\]\.targetContainerName: Not found: "nope"/)
    assert.equal((await client.get(path)).body.spec.ephemeralContainers.length, 2)
  })
})
