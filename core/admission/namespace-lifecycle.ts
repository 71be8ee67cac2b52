/**
 * NamespaceLifecycle (upstream's plugin of that name, first in the chain):
 * nothing is created in a namespace that does not exist or is being
 * terminated, and the system namespaces are never deleted. Deletes and
 * writes to existing objects pass, so that a terminating namespace can be
 * emptied.
 *
 * As upstream, a create looks its namespace up in the server's cache first
 * (no store round trip for every create); a namespace the cache does not
 * have as Active is read from the store, and so is one this server was asked
 * to delete in the last 30 seconds, so a create right after that delete
 * is refused even before the cache hears of it.
 */
import { forbidden, notFound } from '../machinery/status-error.js'
import { namespacePhase } from '../resources/core/namespaces.js'
import type { KubeObject } from '../machinery/object.js'
import type { AdmissionAttributes } from './attributes.js'
import type { MutatingAdmission } from './mutating.js'

/** Upstream's immortal namespaces: the server's own objects live there. */
export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public']

/** Reads one namespace, undefined when there is none. */
export type NamespaceReader = (name: string) => Promise<KubeObject | undefined>

const isNamespace = (a: AdmissionAttributes): boolean => a.entry.group === '' && a.entry.resource === 'namespaces'

export interface NamespaceLifecycleOptions {
  /** The namespace as the cache has it (may lag the store); without it every create reads the store. */
  readCached?: NamespaceReader
  /** @default Date.now */
  now?: () => number
}

/** Upstream's forceLiveLookupTTL: how long a deleted namespace is read from the store. */
const FORCE_LIVE_LOOKUP_MS = 30_000

export function namespaceLifecycle(readNamespace: NamespaceReader, opts: NamespaceLifecycleOptions = {}): MutatingAdmission {
  const now = opts.now ?? Date.now
  /** Namespaces this server was asked to delete: until when to read them from the store. */
  const forceLive = new Map<string, number>()
  const lookup = async (name: string): Promise<KubeObject | undefined> => {
    const until = forceLive.get(name)
    if (until !== undefined && until <= now()) forceLive.delete(name)
    if (opts.readCached && (until === undefined || until <= now())) {
      const cached = await opts.readCached(name)
      if (cached && !terminating(cached)) return cached
    }
    return readNamespace(name)
  }
  return {
    name: 'NamespaceLifecycle',
    handles: (operation) => operation === 'CREATE' || operation === 'DELETE',
    async admit(a) {
      if (isNamespace(a)) {
        if (a.operation === 'DELETE' && !a.subresource && IMMORTAL_NAMESPACES.includes(a.name))
          throw forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted')
        if (a.operation === 'DELETE' && !a.subresource && opts.readCached) forceLive.set(a.name, now() + FORCE_LIVE_LOOKUP_MS)
        return
      }
      if (a.operation !== 'CREATE' || !a.entry.namespaced || !a.namespace) return
      // Subresources (an eviction) act on what exists; a review of access would tell whether a namespace exists.
      if (a.subresource || a.entry.virtualCreate) return
      const ns = await lookup(a.namespace)
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace)
      if (terminating(ns)) {
        const err = forbidden(
          { group: a.entry.group, resource: a.entry.resource },
          a.name,
          `unable to create new content in namespace ${a.namespace} because it is being terminated`,
        )
        // The cause controllers tell this refusal by (upstream's NamespaceTerminatingCause): they stop trying.
        if (err.details) err.details.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }]
        throw err
      }
    },
  }
}

const terminating = (ns: KubeObject): boolean => Boolean(ns.metadata.deletionTimestamp) || namespacePhase(ns) === 'Terminating'
