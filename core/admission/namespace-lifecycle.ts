/**
 * NamespaceLifecycle (upstream's plugin of that name, first in the chain):
 * nothing is created in a namespace that does not exist or is being
 * terminated, and the system namespaces are never deleted. Deletes and
 * writes to existing objects pass, so that a terminating namespace can be
 * emptied.
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

export function namespaceLifecycle(readNamespace: NamespaceReader): MutatingAdmission {
  return {
    name: 'NamespaceLifecycle',
    handles: (operation) => operation === 'CREATE' || operation === 'DELETE',
    async admit(a) {
      if (isNamespace(a)) {
        if (a.operation === 'DELETE' && !a.subresource && IMMORTAL_NAMESPACES.includes(a.name))
          throw forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted')
        return
      }
      if (a.operation !== 'CREATE' || !a.entry.namespaced || !a.namespace) return
      // Subresources (an eviction) act on what exists; a review of access would tell whether a namespace exists.
      if (a.subresource || a.entry.virtualCreate) return
      const ns = await readNamespace(a.namespace)
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, a.namespace)
      if (ns.metadata.deletionTimestamp || namespacePhase(ns) === 'Terminating')
        throw forbidden(
          { group: a.entry.group, resource: a.entry.resource },
          a.name,
          `unable to create new content in namespace ${a.namespace} because it is being terminated`,
        )
    },
  }
}
