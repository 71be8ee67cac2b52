/**
 * The server as a jest fixture (JavaScript; jest runs TypeScript only
 * through a transformer such as ts-jest or babel, which this project does
 * not install): one server for the file, seeded once, `reset()` before each
 * test, and the activity log (`record: true`) to assert on what the code
 * under test asked and wrote.
 *
 * Run (after `npm run build`; jest needs Node's VM modules for ES modules):
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js --config wrangler-free-examples/jest.config.json
 */
/* global Request */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

/**
 * What the code under test would do against a cluster: annotate each namespace of a team as owned by it.
 * @param {import('kube-apiserver-ts').ApiServer} server
 * @param {string} team
 */
async function claimNamespaces(server, team) {
  const list = await (await server.fetch(new Request(`http://in-process/api/v1/namespaces?labelSelector=team%3D${team}`))).json()
  for (const { metadata } of list.items) {
    if (metadata.annotations?.['example.com/owner'] === team) continue
    const res = await server.fetch(
      new Request(`http://in-process/api/v1/namespaces/${metadata.name}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { annotations: { 'example.com/owner': team } } }),
      }),
    )
    if (!res.ok) throw new Error(`claiming ${metadata.name}: ${res.status}`)
  }
}

const server = createApiServer({
  embeddedIdentity: ADMIN_IDENTITY,
  record: true,
  objects: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop-frontend', labels: { team: 'shop' } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop-backend', labels: { team: 'shop' }, annotations: { 'example.com/owner': 'shop' } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'billing', labels: { team: 'billing' } } },
  ],
})

/** The namespace changes the code under test wrote (the server renews its leases in the background, so filter). */
const namespaceChanges = () =>
  server.activity
    .events()
    .filter((e) => e.resource === 'namespaces')
    .map((e) => `${e.type} ${e.name} owner=${e.object.metadata?.annotations?.['example.com/owner'] ?? ''}`)

describe('claimNamespaces', () => {
  beforeAll(() => server.ready)
  beforeEach(() => server.reset())
  afterAll(() => server.shutdown())

  it('annotates only the team namespaces not yet claimed', async () => {
    await claimNamespaces(server, 'shop')
    expect(namespaceChanges()).toEqual(['MODIFIED shop-frontend owner=shop'])
    expect(server.activity.requests().map((r) => `${r.verb} ${r.resource}/${r.name} ${r.status}`)).toEqual([
      'list namespaces/ 200',
      'patch namespaces/shop-frontend 200',
    ])
  })

  it('starts from the seeded state again: the previous claim is undone', async () => {
    const ns = await (await server.fetch(new Request('http://in-process/api/v1/namespaces/shop-frontend'))).json()
    expect(ns.metadata.annotations?.['example.com/owner']).toBeUndefined()
    expect(server.activity.requests()).toHaveLength(1)
  })

  it('writes nothing for a team whose namespaces are all claimed', async () => {
    await claimNamespaces(server, 'shop')
    server.activity.clear()
    await claimNamespaces(server, 'shop')
    expect(namespaceChanges()).toEqual([])
  })
})
