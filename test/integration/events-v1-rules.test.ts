/**
 * Where an events.k8s.io/v1 event may sit, as upstream's event rules say
 * since 1.21: one about a cluster object (no `regarding` namespace) in
 * `default` or `kube-system`, nowhere else; one about a namespaced object
 * is not held to its namespace (the strict rule is the core API's, for
 * events without an eventTime). Refusals name the core kind and fields, as
 * upstream validates the core form of the event.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const events = (namespace: string) => `/apis/events.k8s.io/v1/namespaces/${namespace}/events`

let api: TestClient

before(async () => {
  api = await startServer()
  assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201)
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

const event = (name: string, regarding?: Record<string, unknown>) => ({
  metadata: { name },
  ...(regarding ? { regarding } : {}),
  reason: 'Started',
  type: 'Normal',
  action: 'Start',
  eventTime: '2024-05-01T10:00:00.000000Z',
  reportingController: 'example.com/c',
  reportingInstance: 'c-1',
})

describe('the namespace of an events.k8s.io event', () => {
  it('takes an event about a cluster object in default and in kube-system', async () => {
    for (const namespace of ['default', 'kube-system']) {
      const res = await api.post(events(namespace), event('node-ready', { kind: 'Node', name: 'n1' }))
      assert.equal(res.status, 201, res.text)
    }
    assert.equal((await api.post(events('default'), event('nothing-regarded'))).status, 201)
  })

  it('refuses an event about a cluster object anywhere else, and stores nothing', async () => {
    for (const [name, regarding] of [['node-ready', { kind: 'Node', name: 'n1' }], ['nothing-regarded', undefined]] as const) {
      const res = await api.post(events('team'), event(name, regarding))
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(causes(res.body), ['involvedObject.namespace: Invalid value: "": does not match event.namespace'])
      // The core kind, which upstream validates, names the event.
      assert.equal(res.body.message, `Event "${name}" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace`)
      assert.deepEqual([res.body.details.kind, res.body.details.group], ['Event', undefined])
      assert.equal((await api.get(`${events('team')}/${name}`)).status, 404)
    }
  })

  it('does not hold an event to the namespace of what it regards', async () => {
    const res = await api.post(events('team'), event('pod-elsewhere', { kind: 'Pod', name: 'web', namespace: 'default' }))
    assert.equal(res.status, 201, res.text)
  })
})
