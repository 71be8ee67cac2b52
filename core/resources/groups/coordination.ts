/** coordination.k8s.io/v1: leases, for leader election and node heartbeats. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { textAt } from '../columns/values.js'
import { dropCoordinatedFields, validateLease } from '../coordination/lease-rules.js'
import { defineResource } from '../define.js'

export const leases: ResourceEntry = defineResource({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  resource: 'leases',
  namespaced: true,
  strategy: {
    // Leader election depends on it: an update must name the resourceVersion it read.
    allowUnconditionalUpdate: false,
    prepareForCreate: (lease) => dropCoordinatedFields(lease),
    prepareForUpdate: dropCoordinatedFields,
    validate: validateLease,
    validateUpdate: validateLease,
  },
  columns: [nameColumn, column('Holder', 'Who holds the lease.', textAt('spec', 'holderIdentity')), ageColumn],
})
