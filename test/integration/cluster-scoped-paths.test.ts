/**
 * A cluster-scoped resource has no route under `/namespaces/<ns>/`, as
 * upstream's router has none. Such a path is authorized in that namespace,
 * so serving it let a Role there (a namespace owner's `*` on `*`) read
 * nodes and cluster roles, create namespaces, review tokens and write a
 * mutating webhook that sees every request of the cluster. The walk takes
 * every cluster-scoped resource and subresource from discovery, with each
 * verb it lists, and sends it under the namespace as that owner: each must
 * be a 404, and nothing may be stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/server.js'
import { createTestServer, TestClient } from './harness.js'

const NS = 'team'
const tokens = [
  { token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } },
  { token: 'owner-token', user: { username: 'owner', groups: ['owners'] } },
]
const owner = { connection: {}, headers: { authorization: 'Bearer owner-token' } }
const METHODS: Record<string, string> = { get: 'GET', list: 'GET', watch: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETE' }

describe('cluster-scoped resources under a namespace path', () => {
  let server: ApiServer
  let api: TestClient

  before(async () => {
    server = createTestServer({ authentication: { tokens }, authorizationModes: ['RBAC'] })
    await server.ready
    api = new TestClient(server)
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: NS } }],
      ['/api/v1/nodes', { metadata: { name: 'node-1' } }],
      [`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { metadata: { name: 'owner' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }],
      [
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
        {
          metadata: { name: 'owner' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'owner' },
          subjects: [{ kind: 'User', name: 'owner', apiGroup: 'rbac.authorization.k8s.io' }],
        },
      ],
    ] as const) {
      const reply = await api.post(path, body)
      assert.equal(reply.status, 201, reply.text)
    }
    // The Role is in force once the owner reads its namespace's pods.
    for (let i = 0; i < 100 && (await api.get(`/api/v1/namespaces/${NS}/pods`, owner)).status !== 200; i++) await new Promise((r) => setTimeout(r, 20))
  })
  after(async () => {
    await server?.shutdown()
  })

  it('answers 404 for every cluster-scoped route discovery lists, whatever a Role in the namespace grants', async () => {
    const versions = [{ base: '/api/v1', list: '/api/v1' }]
    for (const group of (await api.get('/apis')).body.groups as { name: string; versions: { groupVersion: string }[] }[])
      for (const { groupVersion } of group.versions) versions.push({ base: `/apis/${groupVersion}`, list: `/apis/${groupVersion}` })
    const problems: string[] = []
    let walked = 0
    for (const { base, list } of versions) {
      for (const r of (await api.get(list)).body.resources as { name: string; namespaced: boolean; verbs: string[] }[]) {
        if (r.namespaced) continue
        const [resource = '', subresource = ''] = r.name.split('/')
        for (const verb of r.verbs) {
          const collection = `${base}/namespaces/${NS}/${resource}`
          const one = ['list', 'watch', 'deletecollection'].includes(verb) || (verb === 'create' && !subresource) ? '' : '/probe'
          const path = `${collection}${one}${subresource ? `/${subresource}` : ''}${verb === 'watch' ? '?watch=true&timeoutSeconds=1' : ''}`
          const body = ['create', 'update', 'patch'].includes(verb) ? JSON.stringify({ metadata: { name: 'probe' } }) : undefined
          const contentType = verb === 'patch' ? 'application/merge-patch+json' : 'application/json'
          const res = await server.fetch(
            new Request(`http://in-process${path}`, { method: METHODS[verb] ?? 'GET', headers: { ...owner.headers, ...(body ? { 'content-type': contentType } : {}) }, body }),
            owner.connection,
          )
          await res.body?.cancel()
          walked++
          if (res.status !== 404) problems.push(`${verb} ${path}: ${res.status}`)
        }
      }
    }
    assert.ok(walked > 100, `discovery listed only ${walked} cluster-scoped routes`)
    assert.deepEqual(problems, [])
  })

  it('stores nothing a namespace owner sends to a cluster-scoped collection through its namespace', async () => {
    const hook = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'owner-hook' },
      webhooks: [
        {
          name: 'owner-hook.example.com',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Ignore',
          clientConfig: { url: 'https://127.0.0.1:1/hook' },
          rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
        },
      ],
    }
    for (const [path, body, stored] of [
      [`/apis/admissionregistration.k8s.io/v1/namespaces/${NS}/mutatingwebhookconfigurations`, hook, '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/owner-hook'],
      [`/api/v1/namespaces/${NS}/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owner-ns' } }, '/api/v1/namespaces/owner-ns'],
    ] as const) {
      const answer = await api.post(path, body, owner)
      assert.equal(answer.status, 404, `${path}: ${answer.text}`)
      assert.equal(answer.body.reason, 'NotFound')
      assert.equal((await api.get(stored)).status, 404, `${stored} was not stored`)
    }
    const node = await api.patch(`/api/v1/namespaces/${NS}/nodes/node-1/status`, { status: { capacity: { cpu: '64' } } }, 'application/merge-patch+json', owner)
    assert.equal(node.status, 404, node.text)
    assert.equal((await api.get('/api/v1/nodes/node-1')).body.status?.capacity?.cpu, undefined)
    const review = await api.post(`/apis/authentication.k8s.io/v1/namespaces/${NS}/tokenreviews`, { spec: { token: 'admin-token' } }, owner)
    assert.equal(review.status, 404, review.text)
  })

  it('still serves a namespace by its own path, authorized in it, as upstream', async () => {
    const own = await api.get(`/api/v1/namespaces/${NS}`, owner)
    assert.equal(own.status, 200, own.text)
    assert.equal(own.body.metadata.name, NS)
    assert.equal((await api.get('/api/v1/namespaces/default', owner)).status, 403)
    // Its subresources too; but a namespace named again under its own path is no route upstream.
    assert.equal((await api.get(`/api/v1/namespaces/${NS}/status`, owner)).status, 200)
    for (const path of [`/api/v1/namespaces/${NS}/namespaces/${NS}`, `/api/v1/namespaces/${NS}/namespaces/${NS}/status`, `/api/v1/namespaces/${NS}/namespaces`]) {
      const res = await api.get(path, owner)
      assert.equal(res.status, 404, `${path}: ${res.text}`)
    }
  })
})
