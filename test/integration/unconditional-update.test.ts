/**
 * An update (PUT) without a resourceVersion, or with "0": for most kinds it
 * writes over whatever is stored, as `kubectl replace` of a manifest saying
 * `resourceVersion: "0"` expects; the kinds whose upstream strategy asks for
 * a resourceVersion refuse it with 422.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { cronTab, cronTabDefinition, installDefinition } from './crd-fixtures.js'
import { startServer, type TestClient } from './harness.js'

const NODES = '/api/v1/nodes'
const CMS = '/api/v1/namespaces/default/configmaps'
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases'
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets'
const WEBHOOKS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations'
const CRONTABS = '/apis/stable.example.com/v1/namespaces/default/crontabs'

/** The body again, with `resourceVersion` set to `rv` (or removed for undefined). */
function withResourceVersion<T extends { metadata: Record<string, unknown> }>(obj: T, rv: string | undefined): T {
  const copy = structuredClone(obj)
  if (rv === undefined) delete copy.metadata['resourceVersion']
  else copy.metadata['resourceVersion'] = rv
  return copy
}

describe('updates without a resourceVersion for kinds that allow them', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('replaces a node whose manifest says resourceVersion "0", "" or nothing', async () => {
    const created = await api.post(NODES, { metadata: { name: 'n1', labels: { round: '0' } } })
    assert.equal(created.status, 201, created.text)
    for (const [round, rv] of [['1', '0'], ['2', ''], ['3', undefined]] as const) {
      const body = withResourceVersion({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { round } } }, rv)
      const res = await api.put(`${NODES}/n1`, body)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.metadata.labels, { round })
      assert.notEqual(res.body.metadata.resourceVersion, '0')
      assert.deepEqual((await api.get(`${NODES}/n1`)).body.metadata.labels, { round })
    }
  })

  it('replaces a config map with resourceVersion "0", and still refuses a stale one with 409', async () => {
    const created = await api.post(CMS, { metadata: { name: 'c' }, data: { a: '1' } })
    const replaced = await api.put(`${CMS}/c`, { metadata: { name: 'c', resourceVersion: '0' }, data: { a: '2' } })
    assert.equal(replaced.status, 200, replaced.text)
    const stale = await api.put(`${CMS}/c`, { metadata: { name: 'c', resourceVersion: created.body.metadata.resourceVersion }, data: { a: '3' } })
    assert.equal(stale.status, 409)
    assert.equal(stale.body.reason, 'Conflict')
    assert.deepEqual((await api.get(`${CMS}/c`)).body.data, { a: '2' })
  })
})

describe('updates without a resourceVersion for kinds that refuse them', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('refuses a lease updated without a resourceVersion or with "0" (422), keeps it, and takes the right one', async () => {
    const created = await api.post(LEASES, { metadata: { name: 'l' }, spec: { holderIdentity: 'a' } })
    assert.equal(created.status, 201, created.text)
    for (const rv of [undefined, '', '0']) {
      const res = await api.put(`${LEASES}/l`, withResourceVersion({ metadata: { name: 'l' }, spec: { holderIdentity: 'b' } }, rv))
      assert.equal(res.status, 422, `resourceVersion ${String(rv)}: ${res.text}`)
      assert.equal(res.body.reason, 'Invalid')
      assert.equal(
        res.body.message,
        'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      )
      assert.deepEqual(res.body.details, {
        name: 'l',
        group: 'coordination.k8s.io',
        kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      })
    }
    assert.deepEqual((await api.get(`${LEASES}/l`)).body, created.body)
    const ok = await api.put(`${LEASES}/l`, { metadata: { name: 'l', resourceVersion: created.body.metadata.resourceVersion }, spec: { holderIdentity: 'b' } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.spec.holderIdentity, 'b')
  })

  it('refuses a disruption budget status written without a resourceVersion, and keeps it', async () => {
    const created = await api.post(PDBS, { metadata: { name: 'b' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } } })
    assert.equal(created.status, 201, created.text)
    const body = withResourceVersion({ ...created.body, status: { disruptionsAllowed: 3, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } }, undefined)
    const res = await api.put(`${PDBS}/b/status`, body)
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, 'poddisruptionbudgets.policy "b" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update')
    assert.deepEqual((await api.get(`${PDBS}/b`)).body, created.body)
  })

  it('refuses a webhook configuration replaced without a resourceVersion, and keeps it', async () => {
    const created = await api.post(WEBHOOKS, { metadata: { name: 'w' }, webhooks: [] })
    assert.equal(created.status, 201, created.text)
    const res = await api.put(`${WEBHOOKS}/w`, withResourceVersion({ ...created.body, metadata: { ...created.body.metadata, labels: { a: 'b' } } }, undefined))
    assert.equal(res.status, 422, res.text)
    assert.equal(
      res.body.message,
      'validatingwebhookconfigurations.admissionregistration.k8s.io "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    )
    assert.deepEqual((await api.get(`${WEBHOOKS}/w`)).body, created.body)
  })

  it('refuses a custom resource replaced without a resourceVersion, and keeps it', async () => {
    await installDefinition(api, cronTabDefinition())
    const created = await api.post(CRONTABS, cronTab('t'))
    assert.equal(created.status, 201, created.text)
    const res = await api.put(`${CRONTABS}/t`, cronTab('t', { cronSpec: '* * * * */6', image: 'cron' }))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, 'crontabs.stable.example.com "t" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update')
    assert.deepEqual((await api.get(`${CRONTABS}/t`)).body, created.body)
    const ok = await api.put(`${CRONTABS}/t`, { ...cronTab('t', { cronSpec: '* * * * */6', image: 'cron' }), metadata: { name: 't', resourceVersion: created.body.metadata.resourceVersion } })
    assert.equal(ok.status, 200, ok.text)
  })

  it('still lets a merge patch without a resourceVersion through, since it changes the stored object', async () => {
    const created = await api.post(LEASES, { metadata: { name: 'patched' }, spec: { holderIdentity: 'a' } })
    assert.equal(created.status, 201, created.text)
    const res = await api.patch(`${LEASES}/patched`, { spec: { holderIdentity: 'c' } }, 'application/merge-patch+json')
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.spec.holderIdentity, 'c')
  })
})
