/** coordination.k8s.io: leases (v1), for leader election and node heartbeats; lease candidates (v1alpha2, off by default), for coordinated leader election. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { textAt } from '../columns/values.js'
import { dropCoordinatedFields, validateLease } from '../coordination/lease-rules.js'
import { validateLeaseCandidate } from '../coordination/lease-candidate-rules.js'
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
    // A PUT of a lease not stored creates it, as upstream's strategy allows.
    allowCreateOnUpdate: true,
    prepareForCreate: (lease, ctx) => dropCoordinatedFields(lease, undefined, ctx.coordinatedLeaderElection),
    prepareForUpdate: (lease, old, ctx) => dropCoordinatedFields(lease, old, ctx.coordinatedLeaderElection),
    validate: validateLease,
    validateUpdate: validateLease,
  },
  columns: [nameColumn, column('Holder', 'Who holds the lease.', textAt('spec', 'holderIdentity')), ageColumn],
})

export const leaseCandidates: ResourceEntry = defineResource({
  group: 'coordination.k8s.io',
  version: 'v1alpha2',
  kind: 'LeaseCandidate',
  resource: 'leasecandidates',
  namespaced: true,
  // Alpha, as upstream: served only when --runtime-config enables coordination.k8s.io/v1alpha2.
  offByDefault: true,
  // A PUT of a candidate not stored creates it, as upstream's strategy allows.
  strategy: { allowCreateOnUpdate: true, validate: validateLeaseCandidate, validateUpdate: validateLeaseCandidate },
  columns: [
    nameColumn,
    column('LeaseName', 'The Lease the candidate runs for.', textAt('spec', 'leaseName')),
    column('BinaryVersion', 'The binary version of the candidate.', textAt('spec', 'binaryVersion')),
    column('EmulationVersion', 'The version the candidate emulates.', textAt('spec', 'emulationVersion')),
    ageColumn,
  ],
})
