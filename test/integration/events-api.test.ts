/**
 * Events through events.k8s.io/v1 and core/v1, as the conformance spec
 * "[sig-instrumentation] Events API should ensure that an event can be
 * fetched, patched, deleted, and listed" drives them, and each field of
 * both versions' field selectors.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const NS = 'default'
const V1 = `/apis/events.k8s.io/v1/namespaces/${NS}/events`
const CORE = `/api/v1/namespaces/${NS}/events`

/** The spec's test event: no source, a reporting controller. */
function testEvent(name: string, label: string): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, labels: { [label]: 'true' } },
    regarding: { namespace: NS },
    eventTime: '2017-09-19T13:49:16.000000Z',
    note: `This is ${name}`,
    action: 'Do',
    reason: 'Test',
    type: 'Normal',
    reportingController: 'test-controller',
    reportingInstance: 'test-node',
  }
}

const names = (reply: { body: { items: { metadata: { name: string } }[] } }) => reply.body.items.map((e) => e.metadata.name).sort()

describe('the Events API (conformance: fetched, patched, deleted, and listed)', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })
  after(() => api.server.shutdown())

  it('creates, lists (by label, by source, by reportingController), gets, patches, updates and deletes an event', async () => {
    const created = await api.post(V1, testEvent('event-test', 'testevent-constant'))
    assert.equal(created.status, 201, created.text)

    const everywhere = await api.get('/apis/events.k8s.io/v1/events?labelSelector=testevent-constant%3Dtrue')
    assert.deepEqual(names(everywhere), ['event-test'])
    assert.deepEqual(names(await api.get(`${V1}?labelSelector=testevent-constant%3Dtrue`)), ['event-test'])

    // The core version selects it by `source`, taken from the reporting controller when the event has no source.
    const bySource = await api.get(`${CORE}?fieldSelector=source%3Dtest-controller`)
    assert.equal(bySource.status, 200, bySource.text)
    assert.deepEqual(names(bySource), ['event-test'])
    const byController = await api.get(`${V1}?fieldSelector=reportingController%3Dtest-controller`)
    assert.equal(byController.status, 200, byController.text)
    assert.deepEqual(names(byController), ['event-test'])

    const fetched = await api.get(`${V1}/event-test`)
    assert.equal(fetched.status, 200)
    assert.equal(fetched.body.note, 'This is event-test')

    // The spec patches in a series (a merge patch); the note of an events.k8s.io event is immutable.
    const series = { count: 2, lastObservedTime: '2017-09-19T13:49:11.000000Z' }
    const patched = await api.patch(`${V1}/event-test`, { series }, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.deepEqual((await api.get(`${V1}/event-test`)).body.series, series)
    const renoted = await api.patch(`${V1}/event-test`, { note: 'This is event-test-patched' }, 'application/merge-patch+json')
    assert.equal(renoted.status, 422)
    assert.equal((await api.get(`${V1}/event-test`)).body.note, 'This is event-test', 'the note is unchanged')

    const updated = await api.update(`${V1}/event-test`, (current) => ({ ...current, series: { count: 100, lastObservedTime: '2017-09-19T13:59:16.000000Z' } }))
    assert.equal(updated.status, 200, updated.text)
    assert.deepEqual((await api.get(`${V1}/event-test`)).body.series, { count: 100, lastObservedTime: '2017-09-19T13:59:16.000000Z' })

    assert.equal((await api.delete(`${V1}/event-test`)).status, 200)
    assert.deepEqual(names(await api.get('/apis/events.k8s.io/v1/events?labelSelector=testevent-constant%3Dtrue')), [])
    assert.deepEqual(names(await api.get(`${CORE}?fieldSelector=source%3Dtest-controller`)), [])
  })
})

describe('the field selectors of events', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    const legacy = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'legacy', namespace: NS },
      involvedObject: { kind: 'Pod', namespace: NS, name: 'web-0', uid: 'u-1', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{app}' },
      reason: 'Started',
      message: 'Started container app',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-01-01T00:00:00Z',
      lastTimestamp: '2024-01-01T00:00:00Z',
      count: 1,
      type: 'Normal',
    }
    assert.equal((await api.post(CORE, legacy)).status, 201)
    const reported = { ...testEvent('reported', 'fields'), regarding: { kind: 'Node', name: 'node-2', namespace: NS }, type: 'Warning', reason: 'Rebooted' }
    assert.equal((await api.post(V1, reported)).status, 201)
  })
  after(() => api.server.shutdown())

  const cases: [string, string, string[]][] = [
    [CORE, 'involvedObject.kind=Pod', ['legacy']],
    [CORE, 'involvedObject.kind=Node', ['reported']],
    [CORE, 'involvedObject.namespace=default', ['legacy', 'reported']],
    [CORE, 'involvedObject.name=web-0', ['legacy']],
    [CORE, 'involvedObject.uid=u-1', ['legacy']],
    [CORE, 'involvedObject.apiVersion=v1', ['legacy']],
    [CORE, 'involvedObject.resourceVersion=7', ['legacy']],
    [CORE, 'involvedObject.fieldPath=spec.containers{app}', ['legacy']],
    [CORE, 'reason=Rebooted', ['reported']],
    [CORE, 'reportingComponent=test-controller', ['reported']],
    [CORE, 'reportingComponent=', ['legacy']],
    [CORE, 'source=kubelet', ['legacy']],
    [CORE, 'source=test-controller', ['reported']],
    [CORE, 'type=Warning', ['reported']],
    [CORE, 'metadata.name=legacy', ['legacy']],
    [CORE, 'metadata.namespace=default', ['legacy', 'reported']],
    [V1, 'regarding.kind=Pod', ['legacy']],
    [V1, 'regarding.name=node-2', ['reported']],
    [V1, 'regarding.fieldPath=spec.containers{app}', ['legacy']],
    [V1, 'reportingController=test-controller', ['reported']],
    [V1, 'reason=Started', ['legacy']],
    [V1, 'type=Normal', ['legacy']],
    [V1, 'metadata.name=reported', ['reported']],
  ]
  for (const [path, selector, expected] of cases) {
    it(`${path.startsWith('/api/') ? 'core/v1' : 'events.k8s.io/v1'} selects ${JSON.stringify(expected)} by ${selector}`, async () => {
      const reply = await api.get(`${path}?fieldSelector=${encodeURIComponent(selector)}`)
      assert.equal(reply.status, 200, reply.text)
      assert.deepEqual(names(reply), expected)
    })
  }

  it('refuses a field that is not in a version\'s set with 400 (source is core/v1\'s name only)', async () => {
    const reply = await api.get(`${V1}?fieldSelector=source%3Dtest-controller`)
    assert.equal(reply.status, 400)
    assert.equal(reply.body.message, 'field label not supported: source')
  })
})
