/**
 * Server-side apply over long lists runs on the serving thread, so its work
 * must grow in proportion to the lists. Work is counted, not timed: the
 * elements of the field sets the apply builds (fieldSetWork), which the
 * machine's speed does not change.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fieldSetWork } from '../../core/apply/fieldset.js'
import { startServer, type TestClient } from './harness.js'

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const APPLY = 'application/apply-patch+yaml'

/** A Deployment whose env items each hold a struct (valueFrom): apply owns each item's named fields. */
function deployment(items: number, tag: string): string {
  const env = Array.from({ length: items }, (_, i) => ({ name: `E${i}`, valueFrom: { fieldRef: { fieldPath: `metadata.${tag}` } } }))
  const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i', env }] } }
  return JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template } })
}

/** Applies twice as one manager (the second apply prunes what it stopped applying) and returns the second apply's work. */
async function secondApply(api: TestClient, items: number): Promise<number> {
  const first = await api.patch(`${DEPLOYS}/d?fieldManager=a`, deployment(items, 'name'), APPLY)
  assert.equal(first.status, 201, first.text.slice(0, 300))
  const before = fieldSetWork()
  const second = await api.patch(`${DEPLOYS}/d?fieldManager=a`, deployment(items, 'namespace'), APPLY)
  const work = fieldSetWork() - before
  assert.equal(second.status, 200, second.text.slice(0, 300))
  const env = second.body.spec.template.spec.containers[0].env
  assert.equal(env.length, items)
  assert.deepEqual(env[items - 1], { name: `E${items - 1}`, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } })
  const [entry] = second.body.metadata.managedFields
  const owned = entry.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"c"}']['f:env']
  assert.equal(Object.keys(owned).filter((k) => k.startsWith('k:')).length, items)
  assert.deepEqual(owned[`k:{"name":"E0"}`]['f:valueFrom'], { 'f:fieldRef': {} })
  return work
}

describe('server-side apply over long lists', { timeout: 120_000 }, () => {
  it('does work linear in the items when an apply of 4000 structured env items widens their named fields', async () => {
    // Each item's valueFrom becomes a member (upstream's EnsureNamedFieldsAreMembers):
    // inserted one path at a time, each insert copied the 4000 items' level (16 million elements for 4000 items).
    const small = await secondApply(await startServer(), 2000)
    const large = await secondApply(await startServer(), 4000)
    assert.ok(large < 2.2 * small, `twice the items took ${(large / small).toFixed(2)} times the work (${small} → ${large} elements)`)
    assert.ok(large < 200 * 4000, `${large} elements placed for 4000 items`)
  })
})
