/**
 * NamespaceLifecycle for namespaced writes: the namespace must exist and not
 * be terminating, worded as upstream's admission plugin words it.
 */
import { forbidden, notFound } from '../http/status-error.js'
import { namespacePhase } from '../resources/core/namespaces.js'
import type { Storage } from '../storage/interface.js'
import type { NamespaceGate } from './store.js'

export function namespaceGate(storage: Storage, namespaceKey: (name: string) => string): NamespaceGate {
  return async (namespace, entry, name) => {
    const ns = await storage.get(namespaceKey(namespace))
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace)
    if (ns.metadata.deletionTimestamp || namespacePhase(ns) === 'Terminating')
      throw forbidden(
        { group: entry.group, resource: entry.resource },
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      )
  }
}
