/** resource.k8s.io/v1: dynamic resource allocation (device classes, claims and slices). */
import { RESET_OBJECT_META_FOR_STATUS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, list, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'

const GROUP = 'resource.k8s.io'

/** `pending`, `allocated,reserved`, `deleted` ..., as upstream summarizes a claim. */
function claimState(claim: KubeObject): string {
  const states: string[] = []
  const deleted = Boolean(claim.metadata.deletionTimestamp)
  if (deleted) states.push('deleted')
  if (at(claim, 'status', 'allocation') === undefined) {
    if (!deleted) states.push('pending')
  } else {
    states.push('allocated')
    if (list(at(claim, 'status', 'reservedFor')).length > 0) states.push('reserved')
  }
  return states.join(',')
}

export const deviceClasses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'DeviceClass',
  resource: 'deviceclasses',
  namespaced: false,
  columns: [nameColumn, ageColumn],
})

export const resourceClaims: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ResourceClaim',
  resource: 'resourceclaims',
  namespaced: true,
  // Its status strategy calls ResetObjectMetaForStatus.
  subresources: [statusSubresource('ResourceClaim', RESET_OBJECT_META_FOR_STATUS)],
  columns: [nameColumn, column('State', 'Pending, allocated, reserved or deleted.', claimState), ageColumn],
})

export const resourceClaimTemplates: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ResourceClaimTemplate',
  resource: 'resourceclaimtemplates',
  namespaced: true,
  columns: [nameColumn, ageColumn],
})

export const resourceSlices: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ResourceSlice',
  resource: 'resourceslices',
  namespaced: false,
  columns: [
    nameColumn,
    column('Node', 'The node whose devices it lists.', textAt('spec', 'nodeName')),
    column('Driver', 'The driver that publishes it.', textAt('spec', 'driver')),
    column('Pool', 'The pool it belongs to.', textAt('spec', 'pool', 'name')),
    ageColumn,
  ],
})

export const resourceEntries: ResourceEntry[] = [deviceClasses, resourceClaimTemplates, resourceClaims, resourceSlices]
