/**
 * What the reviews do with the metadata a client sends: a SelfSubjectReview
 * answers a new object (upstream's REST builds one), and the access reviews
 * refuse any metadata (upstream's validation: it must be empty, but for a
 * LocalSubjectAccessReview's namespace). A hostile caller sending megabytes
 * of it gets neither an echo of megabytes nor an error of a hundred.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { besideAGet, startServer, type TestClient } from './harness.js'

const AUTHZ = '/apis/authorization.k8s.io/v1'
const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews'

const EMPTY_META_TAIL =
  'GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, ' +
  'CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), ' +
  'Labels:map[string]string(nil), Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ' +
  'ManagedFields:[]v1.ManagedFieldsEntry(nil)}'

const resourceSpec = { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } }
const manyOwners = (n: number) => Array.from({ length: n }, () => ({}))

describe('review metadata', () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('answers a SelfSubjectReview with a new object: nothing of the request echoed, created now', async () => {
    const res = await api.post(SSR, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: { name: 'mine', labels: { a: 'b' } } })
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(Object.keys(res.body.metadata), ['creationTimestamp'])
    assert.match(res.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    assert.ok(res.body.status.userInfo.username)
  })

  it('answers a SelfSubjectReview of a hundred thousand owner references in a few hundred bytes', async () => {
    const res = await api.post(SSR, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: { ownerReferences: manyOwners(100_000) } })
    assert.equal(res.status, 201)
    assert.ok(res.text.length < 1000, `${res.text.length} characters`)
  })

  it('refuses a SelfSubjectAccessReview, a SubjectAccessReview and a LocalSubjectAccessReview with metadata, as upstream words it', async () => {
    const cases = [
      [`${AUTHZ}/selfsubjectaccessreviews`, 'SelfSubjectAccessReview', { spec: resourceSpec }, 'must be empty'],
      [`${AUTHZ}/subjectaccessreviews`, 'SubjectAccessReview', { spec: { ...resourceSpec, user: 'u' } }, 'must be empty'],
      [`${AUTHZ}/namespaces/default/localsubjectaccessreviews`, 'LocalSubjectAccessReview', { spec: { ...resourceSpec, user: 'u' } }, 'must be empty except for namespace'],
    ] as const
    for (const [path, kind, body, detail] of cases) {
      const res = await api.post(path, { apiVersion: 'authorization.k8s.io/v1', kind, metadata: { name: 'a' }, ...body })
      assert.equal(res.status, 422, `${kind}: ${res.text}`)
      const namespace = kind === 'LocalSubjectAccessReview' ? 'default' : ''
      const meta = `v1.ObjectMeta{Name:"a", ${EMPTY_META_TAIL.replace('Namespace:""', `Namespace:"${namespace}"`)}`
      assert.equal(res.body.message, `${kind}.authorization.k8s.io "" is invalid: metadata: Invalid value: ${meta}: ${detail}`)
    }
  })

  it('answers reviews whose metadata is empty as kubectl sends it, and a LocalSubjectAccessReview naming its namespace', async () => {
    const ssar = await api.post(`${AUTHZ}/selfsubjectaccessreviews`, { metadata: { creationTimestamp: null }, spec: resourceSpec })
    assert.equal(ssar.status, 201, ssar.text)
    const sar = await api.post(`${AUTHZ}/subjectaccessreviews`, { metadata: { labels: {}, finalizers: [] }, spec: { ...resourceSpec, user: 'u' } })
    assert.equal(sar.status, 201, sar.text)
    const lsar = await api.post(`${AUTHZ}/namespaces/default/localsubjectaccessreviews`, { metadata: { namespace: 'default' }, spec: { ...resourceSpec, user: 'u' } })
    assert.equal(lsar.status, 201, lsar.text)
  })

  it('refuses an access review of a hundred thousand owner references with an error of at most a megabyte', async () => {
    const res = await api.post(`${AUTHZ}/selfsubjectaccessreviews`, { metadata: { ownerReferences: manyOwners(100_000) }, spec: resourceSpec })
    assert.equal(res.status, 422)
    assert.ok(res.body.message.startsWith('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: metadata: Invalid value: v1.ObjectMeta{Name:"", '))
    assert.ok(res.body.message.includes('OwnerReferences:[]v1.OwnerReference{v1.OwnerReference{APIVersion:"", Kind:"", Name:"", UID:"", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}, '))
    assert.ok(res.text.length < 2.5 * 1024 * 1024, `${res.text.length} characters`)
  })

  it('encodes the answer to a review of a long spec in steps, a GET sent beside it answered first', async () => {
    const requirements = Array.from({ length: 20_000 }, (_, i) => ({ key: `k${i}`, operator: 'Exists' }))
    const spec = { resourceAttributes: { ...resourceSpec.resourceAttributes, labelSelector: { requirements } } }
    const { answer, order } = await besideAGet(api, () => api.post(`${AUTHZ}/selfsubjectaccessreviews`, { spec }))
    assert.equal(answer.status, 201, answer.text.slice(0, 300))
    assert.equal(answer.body.spec.resourceAttributes.labelSelector.requirements.length, 20_000)
    assert.deepEqual(order, ['get', 'request'])
  })
})
