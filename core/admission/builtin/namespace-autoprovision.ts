/**
 * NamespaceAutoProvision: a create in a namespace that does not exist
 * creates the namespace first (upstream's plugin of that name; it runs
 * before NamespaceLifecycle). A dry-run creates nothing. The namespace is
 * written by the server itself, as upstream's loopback client does.
 */
import { hasStatusCode, type StatusError } from '../../machinery/status-error.js'
import { LOOPBACK_IDENTITY } from '../../machinery/identities.js'
import { namespaces } from '../../resources/core/namespaces.js'
import type { ObjectReader } from '../../client/informer.js'
import type { StoredObjects } from '../../client/stored-objects.js'
import type { MutatingAdmission } from '../mutating.js'
import { isResource, on, refuse } from './pods.js'

export function namespaceAutoProvision(stored: StoredObjects, index: ObjectReader, now: () => Date): MutatingAdmission {
  return {
    name: 'NamespaceAutoProvision',
    handles: on('CREATE'),
    async admit(a) {
      if (a.dryRun || !a.namespace || isResource(a, '', 'namespaces')) return
      if (await index.read('', a.namespace)) return
      try {
        await stored.create(namespaces, '', { metadata: { name: a.namespace } }, { user: LOOPBACK_IDENTITY, now: now() })
      } catch (err) {
        if (hasStatusCode(err, 409)) return
        throw refuse(a, (err as StatusError).message)
      }
    },
  }
}
