/**
 * Upstream validates an update of a webhook configuration's metadata as a
 * new object's, finalizer names included: a finalizer that is no qualified
 * name is refused on update as on create (here it had been stored by an
 * update, though refused by a create).
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const GROUP = '/apis/admissionregistration.k8s.io/v1'
const QUALIFIED =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

describe('a webhook configuration updated with a bad finalizer', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  for (const [resource, kind] of [
    ['validatingwebhookconfigurations', 'ValidatingWebhookConfiguration'],
    ['mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'],
  ] as const) {
    it(`refuses it for a ${kind} with 422, by PUT and by patch, and stores nothing`, async () => {
      const path = `${GROUP}/${resource}`
      const created = await api.post(path, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'hooks' } })
      assert.equal(created.status, 201, created.text)
      const put = await api.put(`${path}/hooks`, { ...created.body, metadata: { ...created.body.metadata, finalizers: ['bad finalizer'] } })
      assert.equal(put.status, 422, put.text)
      assert.equal(put.body.message, `${kind}.admissionregistration.k8s.io "hooks" is invalid: metadata.finalizers: Invalid value: "bad finalizer": ${QUALIFIED}`)
      assert.deepEqual(put.body.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: "bad finalizer": ${QUALIFIED}`, field: 'metadata.finalizers' }])
      const patched = await api.patch(`${path}/hooks`, { metadata: { finalizers: ['x/y/z'] } }, 'application/merge-patch+json')
      assert.equal(patched.status, 422, patched.text)
      const now = (await api.get(`${path}/hooks`)).body
      assert.equal(now.metadata.resourceVersion, created.body.metadata.resourceVersion, 'nothing was written')
      assert.equal(now.metadata.finalizers, undefined)
      // A qualified finalizer is taken, without the core API's rule that unqualified names be standard.
      const fine = await api.patch(`${path}/hooks`, { metadata: { finalizers: ['example.com/keep', 'keep'] } }, 'application/merge-patch+json')
      assert.equal(fine.status, 200, fine.text)
      assert.deepEqual(fine.body.metadata.finalizers, ['example.com/keep', 'keep'])
    })
  }
})
