/**
 * Empty segments in a request path (`a//b`), kept as upstream splits a path:
 * a path such as `/api/v1/namespaces/kube-system//secrets` names no
 * resource and serves nothing, where merging the slashes had served the
 * Secrets a front proxy judging the path as sent would have kept from the
 * caller. Slashes at either end are dropped, as upstream drops them.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/server.js'
import { createTestServer, TestClient } from './harness.js'

describe('empty segments in a request path', () => {
  let server: ApiServer
  let client: TestClient

  before(async () => {
    server = createTestServer({ authentication: { tokens: [{ token: 'admin-token', user: { username: 'admin', groups: ['system:masters'] } }] } })
    await server.ready
    client = new TestClient(server)
    const created = await client.post('/api/v1/namespaces/kube-system/secrets', { metadata: { name: 's' }, stringData: { owner: 'kube-system' } })
    assert.equal(created.status, 201, created.text)
  })
  after(async () => {
    await server?.shutdown()
  })

  it('serves no object by a path with an empty segment between its parts, as upstream', async () => {
    for (const path of [
      '/api/v1/namespaces/kube-system//secrets',
      '/api/v1/namespaces/kube-system/secrets//s',
      '/api//v1/namespaces/kube-system/secrets/s',
      '/apis/rbac.authorization.k8s.io/v1//clusterroles',
    ]) {
      const answer = await client.get(path)
      assert.equal(answer.status, 404, `${path}: ${answer.text}`)
      assert.equal(answer.body.reason, 'NotFound')
      assert.doesNotMatch(answer.text, /owner|"items"/, `${path} serves nothing`)
    }
  })

  it('drops the slashes at the end of a path, as upstream', async () => {
    const secret = await client.get('/api/v1/namespaces/kube-system/secrets/s/')
    assert.equal(secret.status, 200, secret.text)
    assert.equal(secret.body.metadata.name, 's')
  })
})
