/**
 * What kube-controller-manager's namespace controller and the bootstrap
 * controller do for a namespace, run in-process so a lone API server
 * behaves as a cluster does: the system namespaces exist from the start,
 * and a deleted namespace is emptied, finalized and removed.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { NAMESPACE_FINALIZER, namespaceSpec, namespaces } from '../resources/core/namespaces.js'
import type { KubeObject, UserInfo } from '../machinery/object.js'
import { LOOPBACK_IDENTITY, NAMESPACE_CONTROLLER_IDENTITY } from '../machinery/identities.js'
import type { StoredResources } from './stored-resources.js'
import type { DirectWriteContext } from '../client/object-stores.js'

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const

/** The bootstrap controller's writes are the API server's own; the namespace controller writes as its service account. */
function context(now: Date, user: UserInfo = NAMESPACE_CONTROLLER_IDENTITY): DirectWriteContext {
  return { user, now, dryRun: false }
}

/**
 * Creates the system namespaces that do not exist, as upstream's system
 * namespaces controller: one that exists is only read, so a restart under an
 * admission chain that refuses the write (AlwaysDeny, a policy denying
 * namespace writes) finds nothing to write. Every namespace is tried; the
 * first refusal is thrown once the others have had their turn.
 */
export async function ensureSystemNamespaces(stores: StoredResources, now: () => Date): Promise<void> {
  const store = stores.store(namespaces)
  let failure: unknown
  for (const name of SYSTEM_NAMESPACES) {
    try {
      // Only its being there counts: read-only, so the store hands out its own object instead of a copy.
      // From the cache as it stands ("0"): a consistent read waits for the cache to hear of every write
      // start-up makes meanwhile (some 100 ms on a first start). One it has not heard of yet is created
      // again and answered 409, and a system namespace cannot be deleted.
      await store.get('', name, '0', true)
      continue
    } catch (err) {
      if (!hasStatusCode(err, 404)) {
        failure ??= err
        continue
      }
    }
    try {
      await store.create('', { metadata: { name } }, context(now(), LOOPBACK_IDENTITY))
    } catch (err) {
      if (!hasStatusCode(err, 409)) failure ??= err
    }
  }
  if (failure !== undefined) throw failure
}

/** The pause before a namespace not finished is looked at again: doubled each time, up to the maximum. */
export interface NamespaceRetry {
  /** @default 500 */
  firstDelayMs: number
  /** @default 30000 */
  maxDelayMs: number
}

const DEFAULT_RETRY: NamespaceRetry = { firstDelayMs: 500, maxDelayMs: 30_000 }

/**
 * Watches namespaces and finishes the deletion of every one marked for it.
 * One that cannot be finished yet (objects held by their finalizers, a
 * failed write) is looked at again after a growing pause, as upstream's
 * controller requeues it; nothing else would change it. Returns a stop function.
 */
export function startNamespaceLifecycle(stores: StoredResources, now: () => Date, logger: Logger, retry: NamespaceRetry = DEFAULT_RETRY): () => void {
  const store = stores.store(namespaces)
  const controller = new AbortController()
  const inProgress = new Set<string>()
  const retries = new Map<string, { timer: ReturnType<typeof setTimeout>; attempt: number }>()
  const lookAgain = (name: string) => {
    if (controller.signal.aborted) return
    const attempt = (retries.get(name)?.attempt ?? 0) + 1
    clearTimeout(retries.get(name)?.timer)
    const delay = Math.min(retry.maxDelayMs, retry.firstDelayMs * 2 ** (attempt - 1))
    const timer = setTimeout(() => {
      store
        .get('', name)
        .then((ns) => {
          if (ns.metadata.deletionTimestamp) return finish(ns, attempt)
          retries.delete(name)
        })
        .catch((err: unknown) => {
          if (hasStatusCode(err, 404)) retries.delete(name)
          else lookAgain(name)
        })
    }, delay)
    retries.set(name, { timer, attempt })
  }

  const finish = async (ns: KubeObject, attempt = 0): Promise<void> => {
    const name = ns.metadata.name ?? ''
    // A change of the namespace seen while a pass runs or a retry waits changes nothing that pass or
    // retry will not see: as upstream's queue holds a key once, it is not looked at twice (a pass over
    // many held objects costs seconds of work, and a user may change the namespace at will).
    if (inProgress.has(name) || (attempt === 0 && retries.has(name))) return
    inProgress.add(name)
    try {
      for (const content of stores.namespacedStores()) {
        // In the background, as upstream's namespace deleter asks: a resource that orphans by default (ReplicationControllers, Jobs) does not here.
        await content.deleteCollection(name, { allowWatchBookmarks: false }, { propagationPolicy: 'Background' }, context(now()))
      }
      // Objects held by their own finalizers keep the namespace until they go.
      const remaining = await Promise.all(stores.namespacedStores().map((s) => s.list(name, { allowWatchBookmarks: false }, true)))
      if (remaining.some((l) => l.items.length > 0)) {
        lookAgain(name)
        return
      }
      await store.storage.guaranteedUpdate(store.key('', name), (current) => {
        const spec = namespaceSpec(current)
        return { ...current, spec: { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER) } }
      })
      await store.delete('', name, {}, context(now()))
      retries.delete(name)
    } catch (err) {
      if (!hasStatusCode(err, 404)) {
        logger.warn({ namespace: name, err: String(err) }, 'namespace cleanup failed; it will be retried')
        lookAgain(name)
      }
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
  return () => {
    controller.abort()
    for (const { timer } of retries.values()) clearTimeout(timer)
    retries.clear()
  }
}
