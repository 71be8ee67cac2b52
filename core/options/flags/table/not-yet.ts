/**
 * Why a pending flag is accepted but not yet in effect, worded once and
 * shared by the flags of one feature. When a feature lands, its flags flip
 * from `status: 'pending'` to `status: 'active'`.
 */
export const NOT_YET = {
  emulation: 'only the start-up rules and the feature-gate defaults follow the emulated version; the APIs served and /version are those of the server\'s own version',
  limits: 'connection throughput limits are not enforced yet',
  contentionProfiling: 'V8 has no lock-contention profile; the flag changes nothing',
  metrics: 'the database size (apiserver_storage_size_bytes) is not polled from the store yet',
  nodeAgent: 'the server does not connect to node agents yet',
  peers: 'the peer proxy (UnknownVersionInteroperabilityProxy) is not built: a request for an API only a peer serves gets 404',
  workloads: 'pod-level policies are not applied yet',
} as const
