/**
 * The create-only review resources through `fetch`: each answers the
 * question its spec asks and stores nothing; malformed questions get
 * upstream's errors.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const AUTHZ = '/apis/authorization.k8s.io/v1'
let api: TestClient

before(async () => {
  api = await startServer()
})

describe('access reviews', () => {
  it('SubjectAccessReview answers for the subject named in the spec', async () => {
    const r = await api.post(`${AUTHZ}/subjectaccessreviews`, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } },
    })
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.kind, 'SubjectAccessReview')
    assert.deepEqual(r.body.status, { allowed: true })
  })

  it('SubjectAccessReview without a subject or attributes is Invalid, as upstream words it', async () => {
    const r = await api.post(`${AUTHZ}/subjectaccessreviews`, { spec: {} })
    assert.equal(r.status, 422)
    assert.equal(
      r.body.message,
      'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    )
  })

  it('LocalSubjectAccessReview must ask about its own namespace', async () => {
    const ok = await api.post(`${AUTHZ}/namespaces/default/localsubjectaccessreviews`, {
      metadata: { namespace: 'default' },
      spec: { groups: ['devs'], resourceAttributes: { verb: 'list', resource: 'secrets', namespace: 'default' } },
    })
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.body.status.allowed, true)
    const other = await api.post(`${AUTHZ}/namespaces/default/localsubjectaccessreviews`, {
      metadata: { namespace: 'default' },
      spec: { groups: ['devs'], resourceAttributes: { verb: 'list', resource: 'secrets', namespace: 'kube-system' } },
    })
    assert.equal(other.status, 400)
    assert.equal(other.body.message, 'spec.resourceAttributes.namespace must match namespace: default')
  })

  it('SelfSubjectRulesReview lists everything for a caller allowed everything', async () => {
    const r = await api.post(`${AUTHZ}/selfsubjectrulesreviews`, { spec: { namespace: 'default' } })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status, {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    })
  })
})

describe('token reviews', () => {
  it('refuse a review without a token', async () => {
    const r = await api.post('/apis/authentication.k8s.io/v1/tokenreviews', { spec: {} })
    assert.equal(r.status, 400)
    assert.equal(r.body.message, 'token is required for TokenReview in authentication')
  })

  it('answer that an unknown token authenticates nobody', async () => {
    const r = await api.post('/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'not-a-token' } })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status, { user: {} })
  })
})

describe('bindings', () => {
  it('bind a pod (pod-binding.test.ts); one that does not exist is 404 and nothing is made', async () => {
    const r = await api.post('/api/v1/namespaces/default/bindings', {
      metadata: { name: 'p' },
      target: { kind: 'Node', name: 'node1' },
    })
    assert.equal(r.status, 404)
    assert.equal(r.body.message, 'pods "p" not found')
    assert.equal((await api.get('/api/v1/namespaces/default/pods/p')).status, 404)
  })
})
