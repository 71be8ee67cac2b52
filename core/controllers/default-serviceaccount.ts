/**
 * Every namespace has a `default` ServiceAccount, as upstream's
 * serviceaccounts controller (kube-controller-manager) sees to: created when
 * the namespace appears, and put back when deleted while the namespace lives.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { SERVICE_ACCOUNT_CONTROLLER_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { StoredResources } from './stored-resources.js'
import { namespaces } from '../resources/core/namespaces.js'
import { serviceAccounts } from '../resources/core/serviceaccounts.js'

export const DEFAULT_SERVICE_ACCOUNT = 'default'

/**
 * Gives the namespaces there are their account before it resolves (so that a
 * started server has nothing left to write), then watches for new namespaces
 * and deleted accounts. Resolves to a stop function.
 */
export async function startDefaultServiceAccounts(stores: StoredResources, now: () => Date, logger: Logger): Promise<() => void> {
  const controller = new AbortController()
  const nsStore = stores.store(namespaces)
  const saStore = stores.store(serviceAccounts)

  const ensure = async (namespace: string): Promise<void> => {
    try {
      const ns = await nsStore.get('', namespace)
      // A namespace on its way out takes no new objects.
      if (ns.metadata.deletionTimestamp) return
      await saStore.create(namespace, { metadata: { name: DEFAULT_SERVICE_ACCOUNT } }, { user: SERVICE_ACCOUNT_CONTROLLER_IDENTITY, now: now(), dryRun: false })
    } catch (err) {
      // Already there, or the namespace went (404) or is terminating (403) meanwhile.
      if (hasStatusCode(err, 409) || hasStatusCode(err, 404) || hasStatusCode(err, 403)) return
      logger.warn({ namespace, err: String(err) }, 'creating the default service account failed; retried on the next change')
    }
  }

  const fail = (err: unknown) => {
    if (!controller.signal.aborted) logger.error({ err: String(err) }, 'service account controller stopped')
  }
  const existing = await nsStore.storage.list(nsStore.prefix(''), { readOnly: true })
  // Only the namespaces without an account are written to, as upstream's controller looks in its cache before it creates:
  // a server begun from a start-up template, or restarted on its store, finds every account there and writes nothing.
  const accounts = await saStore.storage.list(saStore.prefix(''), { readOnly: true })
  const served = new Set(accounts.items.filter((sa) => sa.metadata.name === DEFAULT_SERVICE_ACCOUNT).map((sa) => sa.metadata.namespace))
  await Promise.all(existing.items.filter((ns) => !served.has(ns.metadata.name)).map((ns) => ensure(ns.metadata.name ?? '')))
  const watchNamespaces = async () => {
    const watcher = nsStore.storage.watch(nsStore.prefix(''), { resourceVersion: String(existing.revision), signal: controller.signal })
    for await (const event of watcher) {
      if (event.type === 'ADDED' || event.type === 'MODIFIED') void ensure(event.object.metadata.name ?? '')
    }
  }
  const watchAccounts = async () => {
    const watcher = saStore.storage.watch(saStore.prefix(''), { resourceVersion: String(existing.revision), signal: controller.signal })
    for await (const event of watcher) {
      const { name, namespace } = event.object.metadata
      if (event.type === 'DELETED' && name === DEFAULT_SERVICE_ACCOUNT && namespace) void ensure(namespace)
    }
  }
  watchNamespaces().catch(fail)
  watchAccounts().catch(fail)
  return () => controller.abort()
}
