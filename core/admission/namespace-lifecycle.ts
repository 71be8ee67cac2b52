/**
 * NamespaceLifecycle (upstream's plugin of that name, first in the chain):
 * nothing is created in a namespace that does not exist or is being
 * terminated, subresources included (a token, an eviction, a binding are
 * new content too), nothing is updated in one that does not exist, and the
 * system namespaces are never deleted. Deletes and updates in a
 * terminating namespace pass, so that it can be emptied. A
 * LocalSubjectAccessReview alone is exempt: its answer would tell whether
 * the namespace exists.
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

/** Upstream's isAccessReview: the one namespaced review that may name any namespace. */
const isAccessReview = (a: AdmissionAttributes): boolean =>
  a.entry.group === 'authorization.k8s.io' && a.entry.resource === 'localsubjectaccessreviews'

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
  /** The namespace, from the cache when it settles the question: for a create only an Active one does, for an update any. */
  const lookup = async (name: string, creating: boolean): Promise<KubeObject | undefined> => {
    const until = forceLive.get(name)
    if (until !== undefined && until <= now()) forceLive.delete(name)
    if (opts.readCached && (until === undefined || until <= now())) {
      const cached = await opts.readCached(name)
      if (cached && !(creating && terminating(cached))) return cached
    }
    return readNamespace(name)
  }
  return {
    name: 'NamespaceLifecycle',
    handles: (operation) => operation !== 'CONNECT',
    async admit(a) {
      if (isNamespace(a)) {
        if (a.operation === 'DELETE' && !a.subresource && IMMORTAL_NAMESPACES.includes(a.name))
          throw forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted')
        if (a.operation === 'DELETE' && !a.subresource && opts.readCached) forceLive.set(a.name, now() + FORCE_LIVE_LOOKUP_MS)
        return
      }
      if (a.operation === 'DELETE' || !a.entry.namespaced || !a.namespace || isAccessReview(a)) return
      const ns = await lookup(a.namespace, a.operation === 'CREATE')
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace)
      if (a.operation === 'CREATE' && terminating(ns)) {
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
