/** @kubernetes/client-node against the daemon over TLS, as a controller author's code talks to it. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CoreV1Api, KubeConfig, type V1ConfigMap, Watch } from '@kubernetes/client-node'
import { Daemon, eventually } from './daemon.js'

let d: Daemon
let kc: KubeConfig

before(async () => {
  d = await Daemon.start()
  kc = new KubeConfig()
  kc.loadFromFile(d.kubeconfig)
})

after(async () => {
  await d.stop()
})

describe('@kubernetes/client-node against the daemon', () => {
  it('creates, lists and watches configmaps', async () => {
    const core = kc.makeApiClient(CoreV1Api)
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'from-client', labels: { app: 'demo' } }, data: { greeting: 'hello' } },
    })
    assert.equal(created.metadata?.name, 'from-client')
    assert.ok(created.metadata?.uid)

    const list = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=demo' })
    assert.deepEqual(
      list.items.map((i) => i.data),
      [{ greeting: 'hello' }],
    )

    const seen: [string, string | undefined][] = []
    const watch = await new Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: list.metadata?.resourceVersion },
      (type: string, obj: V1ConfigMap) => seen.push([type, obj.metadata?.name]),
      () => {},
    )
    try {
      // client-node sends application/json-patch+json by default.
      await core.patchNamespacedConfigMap({
        namespace: 'default',
        name: 'from-client',
        body: [{ op: 'replace', path: '/data/greeting', value: 'hi' }],
      })
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'from-client' })
      await eventually(() =>
        assert.deepEqual(seen, [
          ['MODIFIED', 'from-client'],
          ['DELETED', 'from-client'],
        ]),
      )
    } finally {
      watch.abort()
    }
  })

  it('reports a missing object as an ApiException with code 404', async () => {
    const core = kc.makeApiClient(CoreV1Api)
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'default', name: 'nope' }), (err: { code?: number; body?: string }) => {
      assert.equal(err.code, 404)
      assert.equal(JSON.parse(err.body ?? '{}').reason, 'NotFound')
      return true
    })
  })
})
