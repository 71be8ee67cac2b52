/**
 * The ownership algorithm shared by updates and applies (structured-merge-
 * diff's merge.Updater): every change between the old and the new object
 * is taken from the managers that owned it (a conflict unless forced), and
 * fields removed from the object leave every manager's set.
 */
import { ApplyConflictError, type ApplyConflict } from './conflict.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { type FieldPrefix, FieldSet } from './fieldset.js'
import type { Managed } from './managed.js'
import { dropNulls, ensureNamedFieldsAreMembers, mergeValuesInSteps, removeItems } from './merge.js'
import { compareObjects, compareObjectsInSteps, fieldSetOfInSteps, jsonEqual, type Comparison, type Shape } from './typed.js'

export interface UpdaterContext {
  shape: Shape
  apiVersion: string
  /** fields nobody owns through this endpoint (upstream's reset fields) */
  ignored: FieldSet
  /** when given, the only fields anyone owns through this endpoint (upstream's reset fields filter) */
  ownedOnly?: readonly FieldPrefix[] | undefined
  /** passes over the object checkpoint within themselves (ManagedFieldsOptions.inSteps) */
  inSteps?: boolean
}

/** What of `set` can be owned through the endpoint. */
function ownable(set: FieldSet, ctx: UpdaterContext): FieldSet {
  const kept = set.recursiveDifference(ctx.ignored)
  return ctx.ownedOnly ? kept.onlyUnder(ctx.ownedOnly) : kept
}

function* compareIgnoring(lhs: unknown, rhs: unknown, ctx: UpdaterContext): Checkpointed<Comparison> {
  const c = ctx.inSteps ? yield* compareObjectsInSteps(lhs, rhs, ctx.shape) : compareObjects(lhs, rhs, ctx.shape)
  if (ctx.ignored.isEmpty() && !ctx.ownedOnly) return c
  return { added: ownable(c.added, ctx), modified: ownable(c.modified, ctx), removed: ownable(c.removed, ctx) }
}

/**
 * Takes changed fields away from every manager but `workflow`; throws on conflicts unless forced.
 * The steps here and below are generators that yield between their passes over the whole object
 * (a comparison, a merge, a field set): for an object of megabytes each pass holds the thread for
 * a long while, and a caller running them in slices lets other requests in between.
 */
function* updateOthers(
  oldObject: unknown,
  newObject: unknown,
  managed: Managed,
  workflow: string,
  force: boolean,
  ctx: UpdaterContext,
): Checkpointed<Comparison> {
  const compare = yield* compareIgnoring(oldObject, newObject, ctx)
  yield
  const changed = compare.modified.union(compare.added)
  const conflicts = new Map<string, FieldSet>()
  for (const [id, vs] of managed) {
    if (id === workflow) continue
    const conflict = vs.set.intersection(changed)
    if (!conflict.isEmpty()) conflicts.set(id, conflict)
  }
  if (!force && conflicts.size > 0) {
    const list: ApplyConflict[] = []
    for (const id of [...conflicts.keys()].sort()) {
      for (const path of (conflicts.get(id) as FieldSet).paths()) list.push({ manager: id, path })
    }
    throw new ApplyConflictError(list)
  }
  for (const [id, vs] of managed) {
    if (id === workflow) continue
    const set = vs.set.difference(conflicts.get(id) ?? FieldSet.empty()).difference(compare.removed)
    if (set.isEmpty()) managed.delete(id)
    else managed.set(id, { ...vs, set })
  }
  return compare
}

/** Ownership after an ordinary write: `manager` gains what changed. Mutates managed. */
export function* recordUpdate(live: unknown, next: unknown, managed: Managed, manager: string, ctx: UpdaterContext): Checkpointed<void> {
  const compare = yield* updateOthers(live, next, managed, manager, true, ctx)
  yield
  const previous = managed.get(manager)
  const set = ownable((previous?.set ?? FieldSet.empty()).difference(compare.removed).union(compare.modified).union(compare.added), ctx)
  if (set.isEmpty()) managed.delete(manager)
  else managed.set(manager, { set, apiVersion: ctx.apiVersion, applied: false, time: previous?.time })
}

/** Merges an applied configuration; returns the new object and whether it differs from live. Mutates managed. */
export function* recordApply(
  live: unknown,
  config: unknown,
  managed: Managed,
  manager: string,
  force: boolean,
  ctx: UpdaterContext,
): Checkpointed<{ object: unknown; changed: boolean }> {
  const merged = (yield* mergeValuesInSteps(live, config, ctx.shape)) ?? {}
  yield
  const lastSet = managed.get(manager)?.set
  const set = ownable(yield* fieldSetOfInSteps(config, ctx.shape), ctx)
  managed.set(manager, { set, apiVersion: ctx.apiVersion, applied: true, time: managed.get(manager)?.time })
  yield
  const pruned = lastSet && !lastSet.isEmpty() ? yield* prune(merged, managed, lastSet, ctx.shape) : merged
  const object = (yield* dropNulls(pruned)) ?? {}
  yield
  yield* updateOthers(live, object, managed, manager, force, ctx)
  if (managed.get(manager)?.set.isEmpty()) managed.delete(manager)
  yield
  return { object, changed: !jsonEqual(live, object) }
}

/**
 * Removes what the applier applied last time but not now, unless another
 * manager (or the new configuration) owns it; items nobody owned stay.
 */
function* prune(merged: unknown, managed: Managed, lastSet: FieldSet, shape: Shape): Checkpointed<unknown> {
  const named = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, shape)
  const last = named(lastSet)
  let pruned = yield* removeItems(merged, last, shape)
  yield

  // add back everything some manager owns
  let owned = FieldSet.empty()
  for (const vs of managed.values()) owned = owned.union(vs.set)
  const mergedSet = named(yield* fieldSetOfInSteps(merged, shape))
  yield
  const keptSet = named(yield* fieldSetOfInSteps(pruned, shape)).union(named(owned))
  yield
  pruned = yield* removeItems(merged, mergedSet.difference(keptSet), shape)
  yield

  // only what the applier owned may go
  const prunedSet = named(yield* fieldSetOfInSteps(pruned, shape))
  yield
  return yield* removeItems(merged, mergedSet.difference(prunedSet).intersection(last), shape)
}
