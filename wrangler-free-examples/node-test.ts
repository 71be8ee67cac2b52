/**
 * The server as a test fixture under node:test: one server for the file,
 * seeded with a CRD and objects, `reset()` before each test instead of a new
 * server, a clock the test moves, a watch ended by a reset, and the
 * activity log (`record: true`) to assert on what the code under test did.
 *
 * Run (after `npm run build`, which the package self-reference resolves to):
 *   node --import tsx --test wrangler-free-examples/node-test.ts
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, manualClock } from 'kube-apiserver-ts'

// What the code under test would do against a cluster: here, scale every Widget of a namespace.
async function scaleWidgets(server: ApiServer, namespace: string, size: number): Promise<number> {
  const url = `http://in-process/apis/example.com/v1/namespaces/${namespace}/widgets`
  const list = (await (await server.fetch(new Request(url))).json()) as { items: { metadata: { name: string } }[] }
  for (const { metadata } of list.items) {
    const res = await server.fetch(
      new Request(`${url}/${metadata.name}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ spec: { size } }),
      }),
    )
    if (!res.ok) throw new Error(`scaling ${metadata.name}: ${res.status}`)
  }
  return list.items.length
}

const seed = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
---
apiVersion: v1
kind: Namespace
metadata: { name: shop }
---
apiVersion: example.com/v1
kind: Widget
metadata: { name: cart, namespace: shop }
spec: { size: 1 }
---
apiVersion: example.com/v1
kind: Widget
metadata: { name: checkout, namespace: shop }
spec: { size: 1 }
`

const clock = manualClock()
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, objects: seed, record: true }, { now: clock.now })
interface Widget {
  metadata: { name: string }
  spec: { size: number }
}
const get = async (path: string): Promise<{ status: number; body: Widget }> => {
  const res = await server.fetch(new Request(`http://in-process${path}`))
  return { status: res.status, body: (await res.json()) as Widget }
}

describe('scaleWidgets', () => {
  before(() => server.ready)
  beforeEach(() => server.reset())
  after(() => server.shutdown())

  it('scales every widget of the namespace', async () => {
    assert.equal(await scaleWidgets(server, 'shop', 5), 2)
    assert.equal((await get('/apis/example.com/v1/namespaces/shop/widgets/cart')).body.spec.size, 5)
    // The activity log (record: true): one list, a patch per widget, each written once.
    assert.deepEqual(
      server.activity.requests().map((r) => `${r.verb} ${r.name}`),
      ['list ', 'patch cart', 'patch checkout', 'get cart'],
    )
    assert.deepEqual(
      server.activity.events().filter((e) => e.resource === 'widgets').map((e) => `${e.type} ${e.name}`),
      ['MODIFIED cart', 'MODIFIED checkout'],
    )
  })

  it('starts from the seeded widgets again after the previous test', async () => {
    assert.equal((await get('/apis/example.com/v1/namespaces/shop/widgets/cart')).body.spec.size, 1)
  })

  it('sees a watch end when a reset changes what it watches, as after a compaction', async () => {
    const watch = await server.fetch(new Request('http://in-process/apis/example.com/v1/namespaces/shop/widgets?watch=1'))
    const body = watch.text()
    assert.equal(await scaleWidgets(server, 'shop', 3), 2)
    await server.reset()
    // The stream ended: the client lists again and sees the seeded sizes, instead of waiting on events that will not come.
    assert.match(await body, /"size":3/)
    assert.equal((await get('/apis/example.com/v1/namespaces/shop/widgets/cart')).body.spec.size, 1)
  })

  it('expires a token by moving the clock, not by waiting', async () => {
    const issued = await server.fetch(
      new Request('http://in-process/api/v1/namespaces/shop/serviceaccounts/default/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } }),
      }),
    )
    assert.equal(issued.status, 201)
    const { status } = (await issued.json()) as { status: { token: string } }
    // A request from "the network" (connection info given) with the token as its credential.
    const asToken = () => server.fetch(new Request('http://in-process/api/v1/namespaces/shop/configmaps', { headers: { authorization: `Bearer ${status.token}` } }), {})
    assert.equal((await asToken()).status, 200)
    // Its 10 minutes, plus the minute of leeway upstream allows for clock skew.
    clock.advance(11 * 60 * 1000 + 1)
    assert.equal((await asToken()).status, 401)
  })
})
