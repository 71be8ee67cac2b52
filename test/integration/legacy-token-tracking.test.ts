/**
 * The legacy token tracking ConfigMap (upstream's legacytokentracking
 * controller): kube-system/kube-apiserver-legacy-service-account-token-tracking
 * holds in `since` the UTC day tracking began. It is there once the server
 * is ready, created again when deleted (at most once per 30 minutes), and its
 * `since` written again when it is not a date.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, manualClock } from '../../core/index.js'
import { TestClient, untilPasses } from './harness.js'

const PATH = '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking'
const MINUTE = 60_000

/** Long enough for the controller to have looked at a change (its clock-jump check runs twice a second). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1200))

describe('legacy token tracking ConfigMap', () => {
  // Twenty minutes before midnight: a creation held back 30 minutes falls on the next day.
  const clock = manualClock(new Date('2026-03-01T23:40:00Z'))
  let server: ApiServer
  let api: TestClient
  before(async () => {
    server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY }, { now: clock.now })
    await server.ready
    api = new TestClient(server)
  })
  after(() => server.shutdown())

  it('is there once the server is ready, with the day tracking began', async () => {
    const r = await api.get(PATH)
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.body.data, { since: '2026-03-01' })
    const health = await api.get('/healthz/poststarthook/start-legacy-token-tracking-controller')
    assert.equal(health.text, 'ok')
  })

  it('is created again when deleted, but not within 30 minutes of its last creation', async () => {
    assert.equal((await api.delete(PATH)).status, 200)
    clock.advance(29 * MINUTE)
    await settle()
    assert.equal((await api.get(PATH)).status, 404, 'held back by the creation rate limit')
    clock.advance(MINUTE)
    await untilPasses(async () => {
      const r = await api.get(PATH)
      assert.equal(r.status, 200, r.text)
      assert.deepEqual(r.body.data, { since: '2026-03-02' })
    })
  })

  it('writes `since` again when it is not a date, and leaves a date as it is', async () => {
    for (const garbage of ['garbage', '2026-02-30', '26-03-02', '']) {
      const r = await api.update(PATH, (cm) => ({ ...cm, data: { since: garbage, other: 'kept' } }))
      assert.equal(r.status, 200, r.text)
      await untilPasses(async () => assert.deepEqual((await api.get(PATH)).body.data, { since: '2026-03-02', other: 'kept' }, garbage))
    }
    const missing = await api.update(PATH, (cm) => ({ ...cm, data: undefined }))
    assert.equal(missing.status, 200, missing.text)
    await untilPasses(async () => assert.deepEqual((await api.get(PATH)).body.data, { since: '2026-03-02' }))

    const leapDay = await api.update(PATH, (cm) => ({ ...cm, data: { since: '2024-02-29' } }))
    assert.equal(leapDay.status, 200, leapDay.text)
    const written = leapDay.body.metadata.resourceVersion
    await settle()
    const r = await api.get(PATH)
    assert.deepEqual(r.body.data, { since: '2024-02-29' })
    assert.equal(r.body.metadata.resourceVersion, written, 'a date is not written again')
  })
})

describe('legacy token tracking ConfigMap from a start-up template', () => {
  const servers: ApiServer[] = []
  after(() => Promise.all(servers.map((s) => s.shutdown())))

  it('is there on a server begun from another one’s start-up', async () => {
    // Options no other test file uses, so that the first server leaves the template the second begins from.
    const options = { embeddedIdentity: ADMIN_IDENTITY, serviceClusterIPRange: ['10.213.0.0/16'] }
    const apis: TestClient[] = []
    for (let i = 0; i < 2; i++) {
      const server = createApiServer(options)
      servers.push(server)
      await server.ready
      apis.push(new TestClient(server))
    }
    const [first, second] = apis as [TestClient, TestClient]
    const namespaceUid = async (a: TestClient) => (await a.get('/api/v1/namespaces/kube-system')).body.metadata.uid
    assert.equal(await namespaceUid(second), await namespaceUid(first), 'the second server began from the template')
    const r = await second.get(PATH)
    assert.equal(r.status, 200, r.text)
    assert.match(r.body.data.since, /^\d{4}-\d{2}-\d{2}$/)
  })
})
