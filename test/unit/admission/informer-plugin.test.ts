/** Plugins over an informer: listed at start-up, or at the first request of the resources they read for. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { withInformer } from '../../../core/admission/informer-plugin.js'
import type { MutatingAdmission } from '../../../core/admission/mutating.js'
import { InformerFactory } from '../../../core/client/informer-factory.js'
import type { ObjectReader } from '../../../core/client/informer.js'
import type { ListWatch } from '../../../core/client/list-watch.js'
import { silentLogger } from '../../../core/logging/logger.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'
import { pods } from '../../../core/resources/core/pods.js'
import { runtimeClasses } from '../../../core/resources/groups/node.js'
import { attrs, pod, refusal } from './attributes.js'

const handler = { name: 'RuntimeClass', metadata: { name: 'gvisor' } } as unknown as KubeObject

/** Informers over a fixed list, counting the lists; `hold` keeps the lists from answering until released. */
function informersOver(objects: KubeObject[]) {
  const lists: string[] = []
  let release: () => void = () => {}
  let held: Promise<void> | undefined
  const source = (resource: string): ListWatch => ({
    async list() {
      lists.push(resource)
      await held
      return { items: objects, revision: 1 }
    },
    watch: () => ({ async *[Symbol.asyncIterator]() {}, stop() {} }),
    get: async () => undefined,
  })
  const factory = new InformerFactory((r) => source(r.resource), silentLogger)
  return {
    factory,
    lists,
    hold() {
      held = new Promise((resolve) => (release = resolve))
    },
    release: () => release(),
  }
}

/** A plugin that labels each pod it admits with the names its reader lists. */
const namingPlugin = (reader: ObjectReader): MutatingAdmission => ({
  name: 'Naming',
  handles: () => true,
  admit(a) {
    if (a.entry.resource !== 'pods' || !a.object) return
    a.object.metadata.labels = { seen: reader.list().map((o) => o.metadata.name).join(',') }
  },
})

describe('withInformer', () => {
  it('lists at once without readsFor, and is ready once listed', async () => {
    const { factory, lists } = informersOver([handler])
    const built = withInformer(factory, runtimeClasses, namingPlugin)
    assert.deepEqual(lists, ['runtimeclasses'])
    await built.ready
    factory.stop()
  })

  it('with readsFor, lists at the first such request, which sees the objects; other requests start nothing', async () => {
    const { factory, lists } = informersOver([handler])
    const { plugin, ready } = withInformer(factory, runtimeClasses, namingPlugin, [pods])
    assert.equal(ready, undefined, 'the server does not wait for it')
    await plugin.admit(attrs(configMaps, 'CREATE', { metadata: { name: 'c', namespace: 'default' } }))
    assert.deepEqual(lists, [], 'a ConfigMap starts no informer')
    const a = attrs(pods, 'CREATE', pod({ containers: [] }))
    await plugin.admit(a)
    assert.deepEqual(lists, ['runtimeclasses'])
    assert.deepEqual(a.object?.metadata.labels, { seen: 'gvisor' })
    const b = attrs(pods, 'CREATE', pod({ containers: [] }))
    await plugin.admit(b)
    assert.deepEqual(lists, ['runtimeclasses'], 'listed once')
    factory.stop()
  })

  it('refuses a request with 403 "not yet ready to handle request" when the list does not come in time, and waits again next time', async () => {
    const informers = informersOver([handler])
    informers.hold()
    const { plugin } = withInformer(informers.factory, runtimeClasses, namingPlugin, [pods], 20)
    const refused = await refusal(() => plugin.admit(attrs(pods, 'CREATE', pod({ containers: [] }))))
    assert.equal(refused?.code, 403)
    assert.match(refused?.message ?? '', /not yet ready to handle request/)
    informers.release()
    const a = attrs(pods, 'CREATE', pod({ containers: [] }))
    await plugin.admit(a)
    assert.deepEqual(a.object?.metadata.labels, { seen: 'gvisor' })
    informers.factory.stop()
  })

  it('fails closed when the plugin reads for a resource it did not name', async () => {
    const { factory } = informersOver([handler])
    const { plugin } = withInformer(factory, runtimeClasses, namingPlugin, [configMaps])
    await assert.rejects(async () => plugin.admit(attrs(pods, 'CREATE', pod({ containers: [] }))), /admission read runtimeclasses before its informer listed them/)
    factory.stop()
  })
})
