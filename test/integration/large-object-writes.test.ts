/**
 * A write of an object of tens of thousands of values makes a dozen passes
 * over it (ownership, admission, validation, the encoding it is stored in),
 * each tens of milliseconds or more: run back to back they held the thread
 * for seconds, with every other request waiting. The steps of such a write
 * now let the event loop run between them. What is counted is whether the
 * loop ran while the write was under way (turns of a setImmediate ticker
 * before the answer), not how long anything took: a small object's write
 * takes none, a large one's takes some on any machine.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const KEYS = 30_000

/** The answer to one request, and how many turns the event loop took before it came. */
async function turnsBeforeAnswer(api: TestClient, method: string, path: string, contentType: string, body: string): Promise<{ status: number; turns: number; body: any }> {
  let turns = 0
  let answered = false
  const tick = (): void => {
    turns++
    if (!answered) setImmediate(tick)
  }
  setImmediate(tick)
  const res = await api.server.fetch(new Request(`http://in-process${path}`, { method, headers: { 'content-type': contentType }, body }))
  answered = true
  const counted = turns
  return { status: res.status, turns: counted, body: await res.json() }
}

describe('writes of large objects', { timeout: 120_000 }, () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
    const data = Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`k${i}`, 'v']))
    assert.equal((await api.post(CM, { metadata: { name: 'large' }, data })).status, 201)
    assert.equal((await api.post(CM, { metadata: { name: 'small' }, data: { k0: 'v' } })).status, 201)
  })

  it(`lets the event loop run between the steps of a merge patch of an object of ${KEYS} keys, and not for a small one`, async () => {
    const patch = JSON.stringify({ metadata: { labels: { patched: 'yes' } } })
    const large = await turnsBeforeAnswer(api, 'PATCH', `${CM}/large?fieldManager=patcher`, 'application/merge-patch+json', patch)
    assert.equal(large.status, 200)
    assert.ok(large.turns > 0, 'the event loop ran while the large object was written')
    assert.equal(Object.keys(large.body.data).length, KEYS)
    assert.equal(large.body.metadata.labels.patched, 'yes')
    assert.deepEqual(
      large.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'patcher')?.fieldsV1,
      { 'f:metadata': { 'f:labels': { '.': {}, 'f:patched': {} } } },
    )

    const small = await turnsBeforeAnswer(api, 'PATCH', `${CM}/small?fieldManager=patcher`, 'application/merge-patch+json', patch)
    assert.equal(small.status, 200)
    assert.equal(small.turns, 0, 'a small object is written without waiting for the event loop')
  })

  it(`lets the event loop run between the steps of a server-side apply to an object of ${KEYS} keys`, async () => {
    const config = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', annotations: { applied: 'yes' } } })
    const applied = await turnsBeforeAnswer(api, 'PATCH', `${CM}/large?fieldManager=applier`, 'application/apply-patch+yaml', config)
    assert.equal(applied.status, 200)
    assert.ok(applied.turns > 0, 'the event loop ran while the large object was applied to')
    assert.equal(applied.body.metadata.annotations.applied, 'yes')
    assert.equal(Object.keys(applied.body.data).length, KEYS)
    assert.deepEqual(
      applied.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'applier')?.fieldsV1,
      { 'f:metadata': { 'f:annotations': { 'f:applied': {} } } },
    )
    // The keys stay their creator's.
    const creator = applied.body.metadata.managedFields.find((e: { operation: string; manager: string }) => e.operation === 'Update' && e.manager !== 'patcher')
    assert.equal(Object.keys(creator.fieldsV1['f:data']).filter((k) => k.startsWith('f:')).length, KEYS)
  })

  it('refuses, with nothing stored, a large update whose resourceVersion is stale, after its steps were sliced', async () => {
    const current = (await api.get(`${CM}/large`)).body
    const stale = { ...current, metadata: { ...current.metadata, resourceVersion: '1' }, data: { ...current.data, extra: 'x' } }
    const answer = await api.put(`${CM}/large`, stale)
    assert.equal(answer.status, 409)
    assert.equal((await api.get(`${CM}/large`)).body.data.extra, undefined)
  })
})
