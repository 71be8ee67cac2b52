/**
 * What the priority and fairness tests share: a server whose store waits
 * at a gate (so requests stay in flight), its two callers, and a level and
 * FlowSchema that jane's requests are routed to.
 */
import assert from 'node:assert/strict'
import { type ApiServer, createApiServer } from '../../core/index.js'
import type { ApiServerOptions } from '../../core/options/api-server-options.js'
import { GatedStorage } from './gated-storage.js'
import { TestClient } from './harness.js'

const tokens = [
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
]
export const asUser = { headers: { authorization: 'Bearer user-token' }, connection: {} }
export const asAdmin = { headers: { authorization: 'Bearer admin-token' }, connection: {} }
export const CM = '/api/v1/namespaces/default/configmaps'
export const FC = '/apis/flowcontrol.apiserver.k8s.io/v1'
export const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })

/** A server whose store holds requests at a gate once started, with the ConfigMap `slow` to read through it. */
export async function startGated(options: ApiServerOptions = {}): Promise<{ server: ApiServer; storage: GatedStorage; api: TestClient }> {
  const storage = new GatedStorage()
  // Reads reach the gate only without the watch cache, which answers them from memory.
  const server = createApiServer({ authentication: { tokens }, watchCache: false, ...options }, { storage })
  await server.ready
  const api = new TestClient(server)
  storage.gating = false
  assert.equal((await api.post(CM, cm('slow'), asAdmin)).status, 201)
  storage.gating = true
  return { server, storage, api }
}

/** Creates a level and a schema sending jane's requests to it, and waits until her requests are classified there. */
export async function routeJaneTo(api: TestClient, level: Record<string, unknown>): Promise<void> {
  assert.equal((await api.post(`${FC}/prioritylevelconfigurations`, { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'jane-level' }, spec: level }, asAdmin)).status, 201)
  const schema = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'jane' },
    spec: {
      priorityLevelConfiguration: { name: 'jane-level' },
      matchingPrecedence: 50,
      distinguisherMethod: { type: 'ByUser' },
      rules: [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }],
    },
  }
  const created = await api.post(`${FC}/flowschemas`, schema, asAdmin)
  assert.equal(created.status, 201)
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const res = await api.get(`${CM}/other`, asUser)
    if (res.headers.get('x-kubernetes-pf-flowschema-uid') === created.body.metadata.uid) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail('jane\'s requests never reached her FlowSchema')
}
