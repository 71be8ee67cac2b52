/**
 * Server-side apply of one configuration to one object: check the
 * configuration, merge it into the live object, settle ownership (conflicts
 * unless forced), drop what the applier stopped applying, and return the
 * new object with its managedFields. Mirrors upstream's field manager chain
 * for apply: last-applied upgrade and sync, the `before-first-apply` entry
 * for objects nobody tracked, the merge, and the entry's time.
 */
import { ApplyConflictError, ApplyInvalidError } from './conflict.js'
import { decodeManagedFields, encodeManagedFieldsInSteps, identifierFor, stripManager, type Managed, type ManagedFieldsEntry } from './managed.js'
import { contextFor, emptyObjectFor, managedFieldsOf, withoutManagedFields, type ManagedFieldsOptions } from './options.js'
import {
  allowedConflictsFromLastApplied,
  buildLastApplied,
  conflictsOutside,
  KUBECTL_MANAGER,
  lastAppliedOf,
  setLastApplied,
} from './last-applied.js'
import { isObject, validateAppliedInSteps } from './typed.js'
import { recordChange } from './update.js'
import { recordApply, type UpdaterContext } from './updater.js'
import { cloneJsonInSteps, formatTimestamp } from '../machinery/object.js'
import { runAtOnce, type Checkpointed } from '../machinery/time-slice.js'
import { MAX_INVALID_TEXT_BYTES } from '../machinery/field.js'

export interface ApplyOptions extends ManagedFieldsOptions {
  /** take fields from other managers instead of failing with a conflict */
  force: boolean
}

export interface ApplyResult {
  /** the object to store, its managedFields included */
  object: Record<string, unknown>
  managedFields: ManagedFieldsEntry[]
}

/** The manager upstream records for the fields of an object it first sees applied to. */
export const BEFORE_FIRST_APPLY = 'before-first-apply'

function gvkText(typeName: string, applied: Record<string, unknown>, opts: ApplyOptions): string {
  const [group = '', version = ''] = opts.apiVersion.includes('/') ? opts.apiVersion.split('/') : ['', opts.apiVersion]
  const kind = typeof applied['kind'] === 'string' ? applied['kind'] : typeName.split('.').pop()
  return `${group}/${version}, Kind=${kind}`
}

/** The apply configuration's apiVersion must be the one the request addresses: upstream checks this before anything else of it. */
export function checkAppliedVersion(applied: Record<string, unknown>, apiVersion: string): void {
  if (applied['apiVersion'] !== apiVersion) {
    throw new ApplyInvalidError(`Incorrect version specified in apply patch. Specified patch version: ${String(applied['apiVersion'] ?? '')}, expected: ${apiVersion}`)
  }
}

/**
 * The lines of a typing error, as upstream's ValidationErrors prints them,
 * up to MAX_INVALID_TEXT_BYTES of them: a body of 3 MiB of duplicate
 * entries makes 750,000 errors, a message of 43 MB where upstream lists
 * every one. The others are counted, as an Invalid answer counts them.
 */
function typingErrorLines(errors: readonly string[]): string[] {
  const lines: string[] = []
  let size = 0
  for (const e of errors) {
    if (lines.length > 0 && size + e.length > MAX_INVALID_TEXT_BYTES) break
    size += e.length
    lines.push(`  ${e}`)
  }
  if (lines.length < errors.length) lines.push(`  ${errors.length - lines.length} more errors not shown`)
  return lines
}

function* checkApplied(applied: Record<string, unknown>, ctx: UpdaterContext, opts: ApplyOptions): Checkpointed<void> {
  checkAppliedVersion(applied, opts.apiVersion)
  const sent = managedFieldsOf(applied)
  if (sent !== undefined && sent !== null) throw new ApplyInvalidError('metadata.managedFields must be nil')
  const errors = yield* validateAppliedInSteps(applied, ctx.shape)
  if (errors.length > 0) {
    const meta = isObject(applied['metadata']) ? applied['metadata'] : {}
    const who = `${String(meta['namespace'] ?? '')}/${String(meta['name'] ?? '')}; ${gvkText(opts.typeName, applied, opts)}`
    const text = errors.length === 1 ? errors[0] : ['errors:', ...typingErrorLines(errors)].join('\n')
    throw new ApplyInvalidError(`failed to create typed patch object (${who}): ${text}`, 'typing')
  }
}

/** The merge with ownership; the applier's entry time moves only when the object changed. */
function* applyOnce(
  live: Record<string, unknown>,
  applied: Record<string, unknown>,
  start: Managed,
  manager: string,
  force: boolean,
  opts: ApplyOptions,
  ctx: UpdaterContext,
): Checkpointed<{ object: Record<string, unknown>; managed: Managed }> {
  const managed: Managed = new Map(start)
  let base: Record<string, unknown> = live
  if (managed.size === 0) {
    // An object nobody tracked: its current fields go to a placeholder updater first.
    const id = identifierFor(BEFORE_FIRST_APPLY, 'Update', opts.apiVersion, opts.subresource)
    yield* recordChange(emptyObjectFor(opts), live, managed, id, opts.now, ctx)
    base = live
  }
  const id = identifierFor(manager, 'Apply', opts.apiVersion, opts.subresource)
  const { object, changed } = yield* recordApply(base, applied, managed, id, force, ctx)
  stripManager(managed, id)
  const entry = managed.get(id)
  if (changed && entry) managed.set(id, { ...entry, time: formatTimestamp(opts.now) })
  return { object: changed ? (object as Record<string, unknown>) : live, managed }
}

/**
 * Applies `applied` (the configuration as the client sent it, decoded) for
 * `manager`. live is undefined when the apply creates the object.
 * Throws ApplyConflictError (409) or ApplyInvalidError (400).
 */
export function applyObject(
  live: Record<string, unknown> | undefined,
  applied: Record<string, unknown>,
  manager: string,
  opts: ApplyOptions,
): ApplyResult {
  return runAtOnce(applyObjectInSteps(live, applied, manager, opts))
}

/** applyObject as steps, for a caller that runs them in slices (each a pass over the object). */
export function* applyObjectInSteps(
  live: Record<string, unknown> | undefined,
  applied: Record<string, unknown>,
  manager: string,
  opts: ApplyOptions,
): Checkpointed<ApplyResult> {
  const ctx = contextFor(opts)
  yield* checkApplied(applied, ctx, opts)
  yield
  let start: Managed
  try {
    start = decodeManagedFields(managedFieldsOf(live))
  } catch (err) {
    throw new Error(`failed to decode managed fields: ${(err as Error).message}`)
  }
  const liveObject = live === undefined ? {} : withoutManagedFields(live)
  yield

  let result: { object: Record<string, unknown>; managed: Managed }
  try {
    result = yield* applyOnce(liveObject, applied, start, manager, opts.force, opts, ctx)
  } catch (err) {
    if (!(err instanceof ApplyConflictError) || manager !== KUBECTL_MANAGER) throw err
    // kubectl's first server-side apply may take over what client-side apply recorded.
    const allowed = allowedConflictsFromLastApplied(live, opts.apiVersion, ctx.shape)
    if (!allowed) throw err
    const remaining = conflictsOutside(err.conflicts, allowed)
    if (remaining.length > 0) throw new ApplyConflictError(remaining)
    result = yield* applyOnce(liveObject, applied, start, manager, true, opts, ctx)
  }
  yield

  // A copy the caller owns; an object of megabytes copied in steps.
  const object = ctx.inSteps ? yield* cloneJsonInSteps(result.object) : structuredClone(result.object)
  yield
  if (manager === KUBECTL_MANAGER && lastAppliedOf(object) !== undefined) {
    setLastApplied(object, buildLastApplied(applied))
  }
  const managedFields = yield* encodeManagedFieldsInSteps(result.managed, ctx.inSteps)
  const meta = (isObject(object['metadata']) ? object['metadata'] : (object['metadata'] = {})) as Record<string, unknown>
  if (managedFields.length > 0) meta['managedFields'] = managedFields
  else delete meta['managedFields']
  return { object, managedFields }
}
