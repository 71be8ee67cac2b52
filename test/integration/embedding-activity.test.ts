/**
 * The activity log of an embedded server (`options.record`, docs/embedding.md,
 * "Embedding in tests"): the requests a test's code made, with caller,
 * verb, resource and status, and the storage changes they caused, readable
 * as soon as the request was answered; bounded, cleared by clear() and
 * reset(), and off unless asked for.
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, manualClock } from '../../core/index.js'

const CONFIGMAPS = '/api/v1/namespaces/team-a/configmaps'
const SEED = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'seeded', namespace: 'team-a' }, data: { mode: 'seeded' } },
]

function call(server: ApiServer, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Response> {
  return server.fetch(
    new Request(`http://in-process${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': contentType }, body: JSON.stringify(body) }),
    }),
  )
}

/** The recorded changes of ConfigMaps only: the server's own leases are renewed in the background. */
function configMapEvents(server: ApiServer): { type: string; name: string; data: unknown; resourceVersion: string }[] {
  return server.activity
    .events()
    .filter((e) => e.resource === 'configmaps')
    .map((e) => ({ type: e.type, name: e.name, data: (e.object as { data?: unknown }).data, resourceVersion: e.resourceVersion }))
}

describe('activity log of an embedded server', () => {
  const clock = manualClock(Date.parse('2030-01-01T00:00:00Z'))
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, objects: SEED, record: true }, { now: clock.now })
  before(() => server.ready)
  beforeEach(() => server.reset())
  after(() => server.shutdown())

  it('starts empty once ready: the seeded objects and start-up writes are not the test’s', () => {
    assert.deepEqual(server.activity.requests(), [])
    assert.deepEqual(configMapEvents(server), [])
  })

  it('records a create, a patch and a delete with the caller, the request info and the status, and the changes they wrote', async () => {
    const created = await call(server, 'POST', CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { color: 'blue' } })
    assert.equal(created.status, 201)
    const patched = await call(server, 'PATCH', `${CONFIGMAPS}/app?fieldManager=test`, { data: { color: 'green' } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200)
    const patchedRv = ((await patched.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion
    assert.equal((await call(server, 'DELETE', `${CONFIGMAPS}/app`)).status, 200)

    const requests = server.activity.requests()
    assert.deepEqual(
      requests.map((r) => [r.method, r.verb, r.resource, r.namespace, r.name, r.status]),
      [
        ['POST', 'create', 'configmaps', 'team-a', '', 201],
        ['PATCH', 'patch', 'configmaps', 'team-a', 'app', 200],
        ['DELETE', 'delete', 'configmaps', 'team-a', 'app', 200],
      ],
    )
    assert.deepEqual(requests[1]?.user, { username: ADMIN_IDENTITY.username, groups: [...(ADMIN_IDENTITY.groups ?? [])] })
    assert.equal(requests[1]?.path, `${CONFIGMAPS}/app`)
    assert.equal(requests[1]?.query, '?fieldManager=test')
    assert.equal(requests[1]?.apiVersion, 'v1')
    assert.equal(requests[1]?.at.toISOString(), '2030-01-01T00:00:00.000Z')

    const events = configMapEvents(server)
    assert.deepEqual(
      events.map((e) => [e.type, e.name, e.data]),
      [
        ['ADDED', 'app', { color: 'blue' }],
        ['MODIFIED', 'app', { color: 'green' }],
        ['DELETED', 'app', { color: 'green' }],
      ],
    )
    assert.equal(events[1]?.resourceVersion, patchedRv)
  })

  it('records a request the server refused, without a user when it was not authenticated', async () => {
    // Connection info given: a request from the network, with no credential.
    const refused = await server.fetch(new Request(`http://in-process${CONFIGMAPS}`), {})
    assert.equal(refused.status, 401)
    assert.equal((await call(server, 'GET', `${CONFIGMAPS}/missing`)).status, 404)
    const [unauthenticated, missing] = server.activity.requests()
    assert.equal(unauthenticated?.status, 401)
    assert.equal(unauthenticated?.verb, 'list')
    assert.equal(unauthenticated?.user, undefined)
    assert.equal(missing?.status, 404)
    assert.equal(missing?.user?.username, ADMIN_IDENTITY.username)
    assert.deepEqual(configMapEvents(server), [], 'reads write nothing')
  })

  it('records no change for an update that changes nothing', async () => {
    const res = await call(server, 'PATCH', `${CONFIGMAPS}/seeded`, { data: { mode: 'seeded' } }, 'application/merge-patch+json')
    assert.equal(res.status, 200)
    assert.equal(server.activity.requests().length, 1)
    assert.deepEqual(configMapEvents(server), [])
  })

  it('hands out frozen copies: a recorded object cannot be changed, in the log or in the server', async () => {
    await call(server, 'PATCH', `${CONFIGMAPS}/seeded`, { data: { mode: 'changed' } }, 'application/merge-patch+json')
    const [event] = server.activity.events().filter((e) => e.resource === 'configmaps')
    assert.throws(() => {
      ;(event!.object as unknown as { data: Record<string, string> }).data['mode'] = 'tampered'
    }, TypeError)
    assert.deepEqual(configMapEvents(server)[0]?.data, { mode: 'changed' })
    const stored = (await (await call(server, 'GET', `${CONFIGMAPS}/seeded`)).json()) as { data: unknown }
    assert.deepEqual(stored.data, { mode: 'changed' })
  })

  it('forgets everything on clear() and on reset()', async () => {
    await call(server, 'DELETE', `${CONFIGMAPS}/seeded`)
    assert.equal(server.activity.requests().length, 1)
    server.activity.clear()
    assert.deepEqual(server.activity.requests(), [])
    assert.deepEqual(server.activity.events(), [])
    await call(server, 'GET', CONFIGMAPS)
    await server.reset()
    assert.deepEqual(server.activity.requests(), [])
    assert.deepEqual(configMapEvents(server), [])
  })
})

describe('activity log bounds and default', () => {
  it('keeps the newest `limit` entries of each list and counts what it dropped', async () => {
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, record: { limit: 3 } })
    try {
      await server.ready
      // Past twice the limit, so that the list is trimmed once along the way.
      for (let i = 0; i < 8; i++) {
        await call(server, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } })
      }
      const requests = server.activity.requests()
      assert.equal(requests.length, 3)
      assert.ok(requests.every((r) => r.verb === 'create' && r.status === 201))
      assert.equal(server.activity.dropped().requests, 5)
      // The newest three changes; a lease renewed in the background may be among them.
      const events = server.activity.events()
      assert.equal(events.length, 3)
      const names = events.filter((e) => e.resource === 'configmaps').map((e) => e.name)
      assert.deepEqual(names, ['cm-5', 'cm-6', 'cm-7'].slice(3 - names.length))
      assert.equal(names.at(-1), 'cm-7')
    } finally {
      await server.shutdown()
    }
  })

  it('is off by default, and reading it then says how to turn it on instead of looking empty', async () => {
    const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
    try {
      await server.ready
      assert.equal(server.activity.enabled, false)
      assert.throws(() => server.activity.requests(), /options\.record/)
      assert.throws(() => server.activity.events(), /options\.record/)
    } finally {
      await server.shutdown()
    }
  })

  it('refuses a limit that is not a positive integer', () => {
    assert.throws(() => createApiServer({ record: { limit: 0 } }), /options\.record\.limit must be a positive integer/)
  })
})

describe('waiting for what the server’s controllers write', () => {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, objects: SEED, record: true })
  before(() => server.ready)
  after(() => server.shutdown())

  it('waits for the namespace controller to delete the objects of a deleted namespace', async () => {
    assert.equal((await call(server, 'DELETE', '/api/v1/namespaces/team-a')).status, 200)
    const deleted = await server.activity.waitForEvent((e) => e.type === 'DELETED' && e.resource === 'configmaps' && e.name === 'seeded', {
      timeoutMs: 30_000,
      description: 'the seeded ConfigMap deleted',
    })
    assert.equal(deleted.namespace, 'team-a')
    assert.deepEqual((deleted.object as unknown as { data: unknown }).data, { mode: 'seeded' })
    // No request asked for that delete: the controller wrote it.
    assert.ok(!server.activity.requests().some((r) => r.resource === 'configmaps'))
    // Already recorded: a second wait answers at once.
    assert.equal(await server.activity.waitForEvent((e) => e.name === 'seeded' && e.type === 'DELETED'), deleted)
  })

  it('rejects, naming what it waited for, when nothing matches in time', async () => {
    await assert.rejects(
      server.activity.waitForEvent((e) => e.name === 'never', { timeoutMs: 50, description: 'a ConfigMap named never' }),
      /no recorded event \(a ConfigMap named never\) matched within 50 ms/,
    )
  })

  it('rejects the wait, not the write, when the predicate throws', async () => {
    // Nothing recorded: the predicate first runs inside the write below.
    server.activity.clear()
    const waiting = server.activity.waitForEvent(() => {
      throw new Error('a broken predicate')
    })
    const res = await call(server, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'still-written' } })
    assert.equal(res.status, 201)
    await assert.rejects(waiting, /a broken predicate/)
  })
})
