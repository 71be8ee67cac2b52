/**
 * Custom resources read from storage show the defaults of their CRD's
 * current schema, as upstream's conformance spec "custom resource
 * defaulting for requests and from storage works" drives it: a CR stored
 * before a default existed gets it on get, list and watch; a CR created
 * after has it stored; a write that starts from a defaulted read stores it;
 * a default taken away leaves stored values alone, and a watch opened
 * before the CRD changed ends so that the client watches the new view.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../core/storage/memory.js'
import { CRDS, installDefinition } from './crd-fixtures.js'
import { createTestServer, eventually, readEvents, TestClient } from './harness.js'

const GROUP = 'defaults.example.com'
const CRD_NAME = `widgets.${GROUP}`
const WIDGETS = `/apis/${GROUP}/v1/widgets`

function definition() {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'object', properties: { d: { type: 'integer' } } } } } },
        },
      ],
    },
  }
}

const widget = (name: string, fields: Record<string, unknown> = {}) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, ...fields })

async function start() {
  const storage = new MemoryStorage()
  const server = createTestServer({}, { storage })
  await server.ready
  const api = new TestClient(server)
  await installDefinition(api, definition())
  return { api, storage }
}

/** The raw object in storage, as the store keeps it (no defaulting on the way). */
async function storedWidget(storage: MemoryStorage, name: string): Promise<Record<string, unknown> | undefined> {
  return (await storage.get(`/registry/${GROUP}/widgets/${name}`)) as Record<string, unknown> | undefined
}

async function jsonPatchCrd(api: TestClient, ops: unknown[]) {
  const r = await api.patch(`${CRDS}/${CRD_NAME}`, ops, 'application/json-patch+json')
  assert.equal(r.status, 200, r.text)
}

const DEFAULT_A = [{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default', value: 'A' }]

describe('custom resources defaulted from storage', () => {
  it('shows a default added after the object was stored on get, list and a new watch, without writing it', async () => {
    const { api, storage } = await start()
    assert.equal((await api.post(WIDGETS, widget('cr-1'))).status, 201)
    await jsonPatchCrd(api, DEFAULT_A)
    await eventually('cr-1 reads with a defaulted', async () => (await api.get(`${WIDGETS}/cr-1`)).body.a === 'A')
    const listed = (await api.get(WIDGETS)).body.items.find((w: any) => w.metadata.name === 'cr-1')
    assert.equal(listed.a, 'A')
    const watch = await api.server.fetch(new Request(`http://in-process${WIDGETS}?watch=true&resourceVersion=0`))
    const [added] = await readEvents(watch, 1)
    assert.equal(added?.type, 'ADDED')
    assert.equal(added?.object.a, 'A')
    // A read defaults what it answers: the stored object stays as written until a write.
    assert.equal((await storedWidget(storage, 'cr-1'))?.['a'], undefined)
  })

  it('stores the default in a CR created after it, and in one written after a defaulted read', async () => {
    const { api, storage } = await start()
    assert.equal((await api.post(WIDGETS, widget('cr-1'))).status, 201)
    await jsonPatchCrd(api, DEFAULT_A)
    await eventually('cr-1 reads with a defaulted', async () => (await api.get(`${WIDGETS}/cr-1`)).body.a === 'A')
    const created = await api.post(WIDGETS, widget('cr-2'))
    assert.equal(created.status, 201)
    assert.equal(created.body.a, 'A')
    assert.equal((await storedWidget(storage, 'cr-2'))?.['a'], 'A')
    const patched = await api.patch(`${WIDGETS}/cr-1`, { metadata: { labels: { touched: 'yes' } } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.equal(patched.body.a, 'A')
    assert.equal((await storedWidget(storage, 'cr-1'))?.['a'], 'A')
  })

  it('keeps a stored default once the default moves to another field, and defaults the new one', async () => {
    const { api } = await start()
    await jsonPatchCrd(api, DEFAULT_A)
    await eventually('a CR created now takes a', async () => {
      const r = await api.post(WIDGETS, widget(`probe-${Math.random().toString(36).slice(2, 8)}`))
      return r.status === 201 && r.body.a === 'A'
    })
    assert.equal((await api.post(WIDGETS, widget('cr-2'))).body.a, 'A')
    await jsonPatchCrd(api, [
      { op: 'remove', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default' },
      { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/b/default', value: 'B' },
    ])
    await eventually('cr-2 reads with b defaulted', async () => (await api.get(`${WIDGETS}/cr-2`)).body.b === 'B')
    const cr2 = (await api.get(`${WIDGETS}/cr-2`)).body
    assert.deepEqual([cr2.a, cr2.b], ['A', 'B'])
  })

  it('defaults nested fields and leaves values the client set', async () => {
    const { api } = await start()
    assert.equal((await api.post(WIDGETS, widget('nested', { a: 'mine', c: {} }))).status, 201)
    await jsonPatchCrd(api, [
      ...DEFAULT_A,
      { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/c/properties/d/default', value: 7 },
    ])
    await eventually('nested reads with c.d defaulted', async () => (await api.get(`${WIDGETS}/nested`)).body.c?.d === 7)
    assert.equal((await api.get(`${WIDGETS}/nested`)).body.a, 'mine')
  })

  it('ends a watch opened before the CRD changed, so that a new one sees the defaults', async () => {
    const { api } = await start()
    assert.equal((await api.post(WIDGETS, widget('watched'))).status, 201)
    const early = await api.server.fetch(new Request(`http://in-process${WIDGETS}?watch=true&resourceVersion=0`))
    const reader = early.body!.getReader()
    const first = await reader.read()
    assert.match(new TextDecoder().decode(first.value), /"ADDED"/)
    await jsonPatchCrd(api, DEFAULT_A)
    // The stream ends (its events so far were the old view); nothing in it shows the old view as new.
    for (;;) {
      const next = await reader.read()
      if (next.done) break
    }
    const again = await api.server.fetch(new Request(`http://in-process${WIDGETS}?watch=true&resourceVersion=0`))
    const [added] = await readEvents(again, 1)
    assert.equal(added?.object.a, 'A')
  })
})
