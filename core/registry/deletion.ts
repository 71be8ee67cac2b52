/**
 * What a DELETE does to an object before (or instead of) removing it, as
 * upstream's generic store decides: graceful deletion (a deletionTimestamp in
 * the future, for resources whose strategy asks for a grace period), the
 * garbage collector's finalizers named by the propagation policy, and the
 * mark left on an object whose finalizers still hold it.
 *
 * The `orphan` and `foregroundDeletion` finalizers set here are the garbage
 * collector's to remove (core/controllers/garbage-collector.ts); with the
 * collector off they stay until someone removes them.
 */
import type { Preconditions } from '../storage/interface.js'
import type { Strategy } from '../resources/catalogue.js'
import { formatTimestamp, type KubeObject } from '../machinery/object.js'
import { fieldPath, type FieldError, invalid, invalidError, notSupported } from '../machinery/field.js'
import { goStrings } from '../machinery/go-format.js'
import { sameJson } from '../machinery/same-json.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../machinery/finalizers.js'
import { appendAll } from '../machinery/append-all.js'

export { FOREGROUND_FINALIZER, ORPHAN_FINALIZER }

export interface DeleteOptions {
  /** `All` runs the delete without storing anything; the request context's dryRun acts on it. */
  dryRun?: string[]
  preconditions?: Preconditions
  gracePeriodSeconds?: number
  propagationPolicy?: string
  /** Deprecated: true means the Orphan policy, false removes the orphan finalizer. */
  orphanDependents?: boolean
}

const POLICIES = ['Foreground', 'Background', 'Orphan'] as const
/** Upstream lists "nil" (no policy) among the values it takes. */
const POLICY_CHOICES = [...POLICIES, 'nil'] as const

/** Upstream's ValidateDryRun, shared by every kind of options: `All` is the only directive. */
export function dryRunErrors(dryRun: readonly string[] | undefined): FieldError[] {
  if (!dryRun || dryRun.every((d) => d === 'All')) return []
  return [notSupported(fieldPath('dryRun'), goStrings([...dryRun]), ['All'])]
}

/** Upstream's ValidateDeleteOptions: a 422 on the DeleteOptions kind. */
export function validateDeleteOptions(options: DeleteOptions): void {
  const errs: FieldError[] = []
  const policy = options.propagationPolicy
  if (options.orphanDependents !== undefined && policy !== undefined)
    errs.push(invalid(fieldPath('propagationPolicy'), policy, 'orphanDependents and deletionPropagation cannot be both set'))
  if (policy !== undefined && !(POLICIES as readonly string[]).includes(policy))
    errs.push(notSupported(fieldPath('propagationPolicy'), policy, POLICY_CHOICES))
  appendAll(errs, dryRunErrors(options.dryRun))
  if (errs.length) throw invalidError('meta.k8s.io', 'DeleteOptions', '', errs)
}

/**
 * What a delete request does to the stored object:
 * - `pending`: a graceful deletion is already under way and this request does not shorten it; nothing changes;
 * - `keep`: store `object` (marked for deletion) and keep it;
 * - `delete`: store `object` if it changed, then remove it.
 */
export interface DeletionPlan {
  outcome: 'pending' | 'keep' | 'delete'
  object: KubeObject
  /** Whether `object` differs from the stored one. */
  changed: boolean
}

export function planDeletion(strategy: Strategy, current: KubeObject, options: DeleteOptions, now: Date): DeletionPlan {
  // A deletion sets metadata's scalars and replaces its finalizers alone: the rest, managedFields too, is
  // shared with the stored object rather than copied (a pass over a megabyte's object), and compared as the same.
  const obj: KubeObject = { ...current, metadata: { ...current.metadata } }
  const grace = gracefulDelete(strategy, obj, options, now)
  if (grace === 'pending') return { outcome: 'pending', object: current, changed: false }
  applyGarbageCollectorFinalizers(obj, options, strategy.orphanDependentsByDefault === true)
  const pendingFinalizers = (obj.metadata.finalizers?.length ?? 0) > 0
  if (grace === 'none') {
    // Nothing holds it: it goes as it is stored.
    if (!pendingFinalizers) return { outcome: 'delete', object: current, changed: false }
    markAsDeleting(obj, now)
    return { outcome: 'keep', object: obj, changed: !sameJson(obj.metadata, current.metadata) }
  }
  // A graceful deletion with time left waits for it (for a pod: its node, or a delete with grace period 0).
  const waiting = pendingFinalizers || (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0
  return { outcome: waiting ? 'keep' : 'delete', object: obj, changed: !sameJson(obj.metadata, current.metadata) }
}

/**
 * Upstream's rest.BeforeDelete: `graceful` when the object was given a
 * deletionTimestamp in the future (or a shorter grace period), `pending` when
 * a graceful deletion already runs and this request does not shorten it.
 */
function gracefulDelete(strategy: Strategy, obj: KubeObject, options: DeleteOptions, now: Date): 'none' | 'graceful' | 'pending' {
  const meta = obj.metadata
  // Negative periods count as one second on the delete path.
  let requested = options.gracePeriodSeconds
  if (requested !== undefined && requested < 0) requested = 1
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1
  if (!strategy.checkGracefulDelete) return 'none'
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds
    // Marked without a grace period (or at 0): finish the deletion now.
    if (!current) return 'none'
    if (requested === undefined || requested >= current) return 'pending'
    // Only a shorter period is taken, counted from the first request.
    const start = Date.parse(meta.deletionTimestamp) - current * 1000
    meta.deletionTimestamp = formatTimestamp(new Date(start + requested * 1000))
    meta.deletionGracePeriodSeconds = requested
    return 'graceful'
  }
  const period = strategy.checkGracefulDelete(obj, requested)
  if (period === undefined) return 'none'
  meta.deletionTimestamp = formatTimestamp(new Date(now.getTime() + period * 1000))
  meta.deletionGracePeriodSeconds = period
  if (meta.generation !== undefined && meta.generation > 0) meta.generation += 1
  return 'graceful'
}

/** Whether a delete with these options leaves the propagation to the resource's default (no policy, no orphanDependents). */
export const namesNoPropagation = (options: DeleteOptions): boolean => options.propagationPolicy === undefined && options.orphanDependents === undefined

/**
 * Sets the `orphan` / `foregroundDeletion` finalizers as the options ask
 * (upstream's deletionFinalizersForGarbageCollection); without a policy the
 * object's own finalizers stay, and an object with neither of them gets the
 * resource's default (`orphanByDefault`).
 */
function applyGarbageCollectorFinalizers(obj: KubeObject, options: DeleteOptions, orphanByDefault: boolean): void {
  let wanted: string | undefined
  if (options.propagationPolicy === 'Orphan' || options.orphanDependents === true) wanted = ORPHAN_FINALIZER
  else if (options.propagationPolicy === 'Foreground') wanted = FOREGROUND_FINALIZER
  else if (options.propagationPolicy === 'Background' || options.orphanDependents === false) wanted = ''
  else if (orphanByDefault && !obj.metadata.finalizers?.some((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER)) wanted = ORPHAN_FINALIZER
  if (wanted === undefined) return
  const after = (obj.metadata.finalizers ?? []).filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER)
  if (wanted) after.push(wanted)
  if (after.length) obj.metadata.finalizers = after
  else delete obj.metadata.finalizers
}

/** An object held by finalizers: deletionTimestamp now (or earlier), no grace period left. */
export function markAsDeleting(obj: KubeObject, now: Date): void {
  const meta = obj.metadata
  if (!meta.deletionTimestamp && meta.generation !== undefined && meta.generation > 0) meta.generation += 1
  if (!meta.deletionTimestamp || Date.parse(meta.deletionTimestamp) > now.getTime()) meta.deletionTimestamp = formatTimestamp(now)
  meta.deletionGracePeriodSeconds = 0
}
