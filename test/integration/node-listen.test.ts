/** listen(): an in-process server on a loopback TLS port, driven by @kubernetes/client-node with the kubeconfig it returns. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { createApiServer } from '../../core/index.js'
import { listen } from '../../runtimes/node/index.js'

describe('listen', () => {
  it('serves an ApiServer to client-node as kubernetes-admin', async () => {
    const server = createApiServer()
    await server.ready
    const listening = await listen(server)
    try {
      assert.match(listening.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const kc = new KubeConfig()
      kc.loadFromString(listening.kubeconfig)
      const core = kc.makeApiClient(CoreV1Api)
      const list = await core.listNamespace()
      assert.ok(list.items.some((ns) => ns.metadata?.name === 'kube-system'))
      const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      })
      assert.equal(review.status?.userInfo?.username, 'kubernetes-admin')
      assert.ok(review.status?.userInfo?.groups?.includes('system:masters'))
    } finally {
      await listening.close()
      await server.shutdown()
    }
  })
})
