import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const SMP = 'application/strategic-merge-patch+json'

describe('strategic merge patch through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
    const created = await client.post(DEPLOYS, {
      metadata: { name: 'web', finalizers: ['example.com/keep'] },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              { name: 'app', image: 'nginx:1.26', env: [{ name: 'A', value: '1' }] },
              { name: 'sidecar', image: 'envoy:1' },
            ],
          },
        },
      },
    })
    assert.equal(created.status, 201, created.text)
  })

  it('merges containers by name and env by name, keeping what the patch does not name', async () => {
    const res = await client.patch(
      `${DEPLOYS}/web`,
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.27', env: [{ name: 'B', value: '2' }] }] } } } },
      SMP,
    )
    assert.equal(res.status, 200, res.text)
    const containers = res.body.spec.template.spec.containers
    assert.deepEqual(
      containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`),
      ['app=nginx:1.27', 'sidecar=envoy:1'],
    )
    assert.deepEqual(containers[0].env, [{ name: 'B', value: '2' }, { name: 'A', value: '1' }])
  })

  it('deletes a list item with $patch: delete and switches the strategy with $retainKeys', async () => {
    const res = await client.patch(
      `${DEPLOYS}/web`,
      {
        spec: {
          strategy: { $retainKeys: ['type'], type: 'Recreate' },
          template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } },
        },
      },
      SMP,
    )
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.spec.strategy, { type: 'Recreate' })
    assert.deepEqual(res.body.spec.template.spec.containers.map((c: { name: string }) => c.name), ['app'])
  })

  it('merges finalizers as a set', async () => {
    const res = await client.patch(`${DEPLOYS}/web`, { metadata: { finalizers: ['example.com/other'] } }, SMP)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual([...res.body.metadata.finalizers].sort(), ['example.com/keep', 'example.com/other'])
  })

  it('answers a list item without its merge key with 500 as upstream does, and a malformed directive with 400, changing nothing', async () => {
    const before = (await client.get(`${DEPLOYS}/web`)).body
    // Upstream's PATCH handler passes this failure on as the plain error it is: a 500 with no reason.
    const noKey = await client.patch(`${DEPLOYS}/web`, { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }, SMP)
    assert.equal(noKey.status, 500, noKey.text)
    assert.equal(noKey.body.reason, undefined)
    assert.equal(noKey.body.message, 'map: map[image:x] does not contain declared merge key: name')
    const badRetain = await client.patch(`${DEPLOYS}/web`, { spec: { strategy: { $retainKeys: 'type' } } }, SMP)
    assert.equal(badRetain.status, 400, badRetain.text)
    assert.equal(badRetain.body.message, 'invalid patch format of retainKeys')
    assert.deepEqual((await client.get(`${DEPLOYS}/web`)).body, before)
  })

  it("refuses a patch of an unknown type with the router's 415, as upstream's PATCH route does", async () => {
    const res = await client.patch(`${DEPLOYS}/web`, '{}', 'application/x-unknown-patch')
    assert.equal(res.status, 415)
    assert.equal(res.body.message, '415: Unsupported Media Type')
  })
})
