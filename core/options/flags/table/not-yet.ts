/**
 * Why a pending flag is accepted but not yet in effect, worded once and
 * shared by the flags of one feature. When a feature lands, its flags flip
 * from `status: 'pending'` to `status: 'active'`.
 */
export const NOT_YET = {
  contentionProfiling: 'V8 has no lock-contention profile; the flag changes nothing',
  workloads: 'pod-level policies are not applied yet',
} as const
