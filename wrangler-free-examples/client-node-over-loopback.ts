/**
 * A real Kubernetes client against an in-process server on an ephemeral
 * loopback TLS port: `listen` makes an in-memory CA, a serving certificate
 * and an admin client certificate, and returns a kubeconfig for them.
 * The shape for testing controllers with @kubernetes/client-node.
 *
 * Run (after `npm run build`):
 *   node --import tsx wrangler-free-examples/client-node-over-loopback.ts
 */
import { CoreV1Api, KubeConfig, type V1ConfigMap, Watch } from '@kubernetes/client-node'
import { createApiServer } from 'kube-apiserver-ts'
import { listen } from 'kube-apiserver-ts/node'

const server = createApiServer()
const listening = await listen(server)
console.log(`listening: ${listening.url}`)

const kc = new KubeConfig()
kc.loadFromString(listening.kubeconfig)
const core = kc.makeApiClient(CoreV1Api)
const namespace = 'default'

const first = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'first' }, data: { color: 'blue' } } })
console.log(`create: ${first.metadata?.name} uid=${first.metadata?.uid ? 'set' : 'missing'}`)

const list = await core.listNamespacedConfigMap({ namespace })
console.log(`list: ${list.items.map((cm) => cm.metadata?.name).join(',')}`)

// Watch from the list's resourceVersion: the next event is exactly the next change.
let resolveAdded: (object: V1ConfigMap) => void = () => {}
const added = new Promise<V1ConfigMap>((resolve) => {
  resolveAdded = resolve
})
const watch = await new Watch(kc).watch(
  `/api/v1/namespaces/${namespace}/configmaps`,
  { resourceVersion: list.metadata?.resourceVersion },
  (phase: string, object: V1ConfigMap) => {
    if (phase === 'ADDED' && object.metadata?.name === 'second') resolveAdded(object)
  },
  // Called when the watch ends, also after our own abort() below.
  () => {},
)
await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'second' }, data: { color: 'green' } } })
const event = await added
watch.abort()
console.log(`watch: ADDED ${event.metadata?.name} color=${event.data?.['color']}`)

await listening.close()
await server.shutdown()
