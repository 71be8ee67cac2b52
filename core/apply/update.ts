/**
 * managedFields for ordinary writes (create, update, non-apply patch): the
 * fields that changed become the writer's, under an `Update` entry for its
 * manager name, apiVersion and subresource. This is upstream's field
 * manager chain for updates: keep or reset what the client sent, skip
 * objects that were never tracked, record the change, cap the number of
 * update entries.
 */
import { capUpdateManagers, decodeManagedFields, decodeOrEmpty, encodeManagedFieldsInSteps, identifierFor, isResetManagedFields, stripManager, type Managed, type ManagedFieldsEntry } from './managed.js'
import { contextFor, emptyObjectFor, managedFieldsOf, withoutManagedFields, type ManagedFieldsOptions } from './options.js'
import { recordUpdate, type UpdaterContext } from './updater.js'
import { formatTimestamp } from '../machinery/object.js'
import { runAtOnce, type Checkpointed } from '../machinery/time-slice.js'

/** The placeholder the change is recorded under before it joins the manager's entry. */
const CURRENT_OPERATION = 'current-operation'

/**
 * Which managers the write starts from: a subresource always keeps the live
 * object's; otherwise the client's own list when it is readable and not
 * empty, `[]` (or one empty entry) to clear them, else the live object's.
 */
function startingManagers(live: unknown, next: unknown, subresource: string | undefined): Managed {
  if (subresource) return decodeOrEmpty(managedFieldsOf(live))
  const sent = managedFieldsOf(next)
  if (isResetManagedFields(sent)) return new Map()
  try {
    const managed = decodeManagedFields(sent)
    if (managed.size > 0) return managed
  } catch {
    // unreadable entries from a client: keep what the live object has
  }
  return decodeOrEmpty(managedFieldsOf(live))
}

/** Records `manager`'s change from base to next; the entry's time moves only when it took something. */
export function* recordChange(base: unknown, next: unknown, managed: Managed, id: string, now: Date, ctx: UpdaterContext): Checkpointed<void> {
  yield* recordUpdate(base, next, managed, CURRENT_OPERATION, ctx)
  stripManager(managed, CURRENT_OPERATION)
  const current = managed.get(CURRENT_OPERATION)
  if (!current) return
  managed.delete(CURRENT_OPERATION)
  const previous = managed.get(id)
  managed.set(id, {
    set: previous ? current.set.union(previous.set) : current.set,
    apiVersion: current.apiVersion,
    applied: false,
    time: formatTimestamp(now),
  })
}

/**
 * The managedFields to store with `next` after a create (live undefined) or
 * an update by `manager`. An empty result means the object carries none.
 */
export function updateManagedFields(
  live: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  manager: string,
  opts: ManagedFieldsOptions,
): ManagedFieldsEntry[] {
  return runAtOnce(updateManagedFieldsInSteps(live, next, manager, opts))
}

/** updateManagedFields as steps, for a caller that runs them in slices (each a pass over the object). */
export function* updateManagedFieldsInSteps(
  live: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  manager: string,
  opts: ManagedFieldsOptions,
): Checkpointed<ManagedFieldsEntry[]> {
  const managed = startingManagers(live, next, opts.subresource)
  // An existing object nobody tracked stays untracked until its first apply.
  if (managed.size === 0 && live !== undefined) return []
  yield
  const ctx = contextFor(opts)
  const base = live === undefined ? emptyObjectFor(opts) : withoutManagedFields(live)
  const id = identifierFor(manager, 'Update', opts.apiVersion, opts.subresource)
  yield* recordChange(base, withoutManagedFields(next), managed, id, opts.now, ctx)
  capUpdateManagers(managed)
  yield
  return yield* encodeManagedFieldsInSteps(managed, ctx.inSteps)
}
