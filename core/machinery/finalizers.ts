/**
 * The garbage collector's finalizers (metav1.FinalizerOrphanDependents and
 * FinalizerDeleteDependents): a delete with the Orphan or Foreground
 * propagation policy sets one, and the collector removes it once the
 * dependents are orphaned or gone. Both the store's deletion and the
 * collector read them.
 */
export const ORPHAN_FINALIZER = 'orphan'
export const FOREGROUND_FINALIZER = 'foregroundDeletion'
