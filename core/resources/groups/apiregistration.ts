/**
 * apiregistration.k8s.io/v1: APIServices. The entry only: proxying to
 * aggregated APIs is their own work. Upstream keeps them under their group
 * in storage.
 */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, list, text } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import {
  applyApiServiceDefaults,
  prepareApiServiceForCreate,
  validateApiService,
  validateApiServiceStatusUpdate,
  validateApiServiceUpdate,
} from '../apiregistration/api-service-rules.js'
import { pathSegmentName } from '../names.js'

/** `True`, or `False (reason)`, from the Available condition; `Unknown` without one. */
function available(apiService: KubeObject): string {
  const c = list(at(apiService, 'status', 'conditions')).find((c) => text(at(c, 'type')) === 'Available')
  if (c === undefined) return 'Unknown'
  const status = text(at(c, 'status'))
  const reason = text(at(c, 'reason'))
  return status !== 'True' && reason ? `${status} (${reason})` : status
}

export const apiServices: ResourceEntry = defineResource({
  group: 'apiregistration.k8s.io',
  version: 'v1',
  kind: 'APIService',
  resource: 'apiservices',
  namespaced: false,
  categories: ['api-extensions'],
  // apiServerStatusStrategy: labels, annotations, finalizers and owners stay as stored; only the conditions are checked.
  subresources: [
    {
      ...statusSubresource('APIService', ['labels', 'annotations', 'finalizers', 'ownerReferences']),
      validateUpdate: validateApiServiceStatusUpdate,
    },
  ],
  // Named `<version>.<group>`; the generic rule is the path segment, the rest is its strategy's.
  validateName: pathSegmentName,
  storagePath: 'apiregistration.k8s.io/apiservices',
  strategy: {
    applyDefaults: applyApiServiceDefaults,
    prepareForCreate: (apiService, ctx) => prepareApiServiceForCreate(apiService, ctx.now),
    validate: validateApiService,
    validateUpdate: validateApiServiceUpdate,
    // Upstream's strategy refuses an update without a resourceVersion.
    allowUnconditionalUpdate: false,
  },
  columns: [
    nameColumn,
    column('Service', 'Where the API is served: Local or namespace/name.', (s) => {
      const svc = at(s, 'spec', 'service')
      return svc === undefined ? 'Local' : `${text(at(svc, 'namespace'))}/${text(at(svc, 'name'))}`
    }),
    column('Available', 'Whether the API is reachable.', available),
    ageColumn,
  ],
})
