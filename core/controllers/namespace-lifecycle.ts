/**
 * What kube-controller-manager's namespace controller and the bootstrap
 * controller do for a namespace, run in-process so a lone API server
 * behaves as a cluster does: the system namespaces exist from the start,
 * and a deleted namespace is emptied, finalized and removed.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../ports.js'
import { NAMESPACE_FINALIZER, namespaceSpec, namespaces } from '../resources/core/namespaces.js'
import type { KubeObject, UserInfo } from '../machinery/object.js'
import { LOOPBACK_IDENTITY, NAMESPACE_CONTROLLER_IDENTITY } from '../registry/identities.js'
import type { Registry } from '../registry/registry.js'
import type { RequestContext } from '../registry/request-context.js'

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const

/** The bootstrap controller's writes are the API server's own; the namespace controller writes as its service account. */
function context(now: Date, user: UserInfo = NAMESPACE_CONTROLLER_IDENTITY): RequestContext {
  return { user, now, dryRun: false }
}

export async function ensureSystemNamespaces(registry: Registry, now: () => Date): Promise<void> {
  const store = registry.store(namespaces)
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await store.create('', { metadata: { name } }, context(now(), LOOPBACK_IDENTITY))
    } catch (err) {
      if (!hasStatusCode(err, 409)) throw err
    }
  }
}

/** Watches namespaces and finishes the deletion of every one marked for it. Returns a stop function. */
export function startNamespaceLifecycle(registry: Registry, now: () => Date, logger: Logger): () => void {
  const store = registry.store(namespaces)
  const controller = new AbortController()
  const inProgress = new Set<string>()

  const finish = async (ns: KubeObject): Promise<void> => {
    const name = ns.metadata.name ?? ''
    if (inProgress.has(name)) return
    inProgress.add(name)
    try {
      for (const content of registry.namespacedStores()) {
        await content.deleteCollection(name, { allowWatchBookmarks: false }, {}, context(now()))
      }
      // Objects held by their own finalizers keep the namespace until they go.
      const remaining = await Promise.all(registry.namespacedStores().map((s) => s.list(name, { allowWatchBookmarks: false })))
      if (remaining.some((l) => l.items.length > 0)) return
      await store.storage.guaranteedUpdate(store.key('', name), (current) => {
        const spec = namespaceSpec(current)
        return { ...current, spec: { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER) } }
      })
      await store.delete('', name, {}, context(now()))
    } catch (err) {
      if (!hasStatusCode(err, 404))
        logger.warn({ namespace: name, err: String(err) }, 'namespace cleanup failed; it will be retried on its next change')
    } finally {
      inProgress.delete(name)
    }
  }

  const loop = async () => {
    const watcher = store.storage.watch(store.prefix(''), { signal: controller.signal })
    for await (const event of watcher) {
      if (event.type !== 'DELETED' && event.object.metadata.deletionTimestamp) void finish(event.object)
    }
  }
  loop().catch((err) => {
    if (!controller.signal.aborted) logger.error({ err: String(err) }, 'namespace lifecycle controller stopped')
  })
  return () => controller.abort()
}
