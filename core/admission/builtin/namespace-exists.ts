/**
 * NamespaceExists: a write in a namespace that does not exist is refused
 * with 404 for the namespace (upstream's plugin of that name, validating,
 * on create, update and delete). The watch-fed index answers; a name it
 * lacks is read from storage, as a namespace just created may not have
 * reached the watch yet.
 */
import { notFound } from '../../machinery/status-error.js'
import type { ObjectReader } from '../../client/informer.js'
import type { ValidatingAdmission } from '../validating.js'
import { isResource, on } from './pods.js'

export function namespaceExists(namespaces: ObjectReader): ValidatingAdmission {
  return {
    name: 'NamespaceExists',
    handles: on('CREATE', 'UPDATE', 'DELETE'),
    async validate(a) {
      if (!a.namespace || isResource(a, '', 'namespaces')) return
      if (!(await namespaces.read('', a.namespace))) throw notFound({ group: '', resource: 'namespaces' }, a.namespace)
    },
  }
}
