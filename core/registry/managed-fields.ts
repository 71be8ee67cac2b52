/**
 * The registry's side of server-side apply: which manager a request writes
 * as, the `Update` entries every create, update and patch records, and an
 * apply's merge with its failures turned into upstream's answers (409 for
 * conflicts, 400 for a configuration that cannot be applied, 500 for one a
 * custom resource's schema cannot type). Built-in kinds
 * take their structure from the type tables, custom resources from their
 * version's schema.
 */
import type { MutatingAdmission } from '../admission/mutating.js'
import {
  applyObjectInSteps,
  ApplyConflictError,
  ApplyInvalidError,
  checkAppliedVersion,
  decodeManagedFields,
  FieldSet,
  ManagedFieldsDecodeError,
  scaleManagedFields,
  updateManagedFieldsInSteps,
  type ManagedFieldsOptions,
  type Path,
} from '../apply/index.js'
import { applyShapeOf } from '../apply/crd-shape.js'
import { utf8Length } from '../machinery/utf8-length.js'
import { badRequest, StatusError } from '../machinery/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { cloneJson, extended, type KubeObject } from '../machinery/object.js'
import { typeTable } from '../resources/schema/index.js'
import type { RequestContext } from './request-context.js'
import { WriteSteps } from './write-steps.js'

/** Upstream's FieldManagerMaxLength. */
const MAX_MANAGER_LENGTH = 128

/**
 * The manager a write is recorded under: `fieldManager` when given, else
 * the User-Agent up to its first `/`, printable characters only, at most 128
 * bytes (upstream's prefixFromUserAgent), and `unknown` when that leaves
 * nothing (a request without a User-Agent), as upstream's field manager
 * names it.
 */
export function managerName(fieldManager: string | null, userAgent: string | null): string {
  if (fieldManager) return fieldManager
  let out = ''
  let bytes = 0
  for (const ch of (userAgent ?? '').split('/')[0] ?? '') {
    if (!/\P{C}/u.test(ch)) continue
    const size = utf8Length(ch)
    if (bytes + size > MAX_MANAGER_LENGTH) break
    out += ch
    bytes += size
  }
  return out || 'unknown'
}

function tracked(entry: ResourceEntry): boolean {
  return entry.schema !== undefined || typeTable[entry.typeName] !== undefined
}

/**
 * The engine's options for a write to `entry`; a subresource that owns only
 * some fields (pods/resize) says which. A custom resource brings its
 * schema's shape and upstream's reset fields for custom resources: status
 * through the main resource when the status subresource is enabled, spec
 * through the status subresource.
 */
function optionsFor(entry: ResourceEntry, apiVersion: string, now: Date, subresource: string | undefined): ManagedFieldsOptions {
  const opts: ManagedFieldsOptions = { now, apiVersion, typeName: entry.typeName, ...(subresource ? { subresource } : {}) }
  const ownedOnly = subresource ? entry.subresources?.find((s) => s.name === subresource)?.ownedFields : undefined
  if (ownedOnly) opts.ownedOnly = ownedOnly
  if (!entry.schema) return opts
  const statusEnabled = entry.subresources?.some((s) => s.name === 'status') ?? false
  let resetFields = FieldSet.empty()
  if (subresource === 'status') resetFields = FieldSet.of([{ field: 'spec' }])
  else if (subresource === undefined && statusEnabled) resetFields = FieldSet.of([{ field: 'status' }])
  // Set on the fresh object, not spread into another with the keys added (the slow path of `extended`'s note).
  opts.shape = applyShapeOf(entry.schema)
  opts.resetFields = resetFields
  return opts
}

/**
 * A configuration the schema cannot type. Upstream's field manager returns
 * it as a plain error, which its handlers answer with a 500 Status that has
 * no reason; custom resources answer the same (built-in kinds keep a 400).
 */
class UntypedApplyError extends StatusError {
  constructor(message: string) {
    super(500, 'InternalError', message)
  }

  override toStatus(): ReturnType<StatusError['toStatus']> {
    const { reason: _omitted, ...status } = super.toStatus()
    return status
  }
}

/** Where the parent keeps the replicas its Scale shows: `spec.replicas`, or a custom resource's own path. */
function replicasPathOf(entry: ResourceEntry): Path {
  const path = entry.scalePaths?.specReplicasPath ?? '.spec.replicas'
  return path.replace(/^\./, '').split('.').map((field) => ({ field }))
}

/** The value at a path of field names, undefined where something on the way is missing. */
function valueAt(obj: KubeObject | undefined, path: Path): unknown {
  let value: unknown = obj
  for (const pe of path) value = value !== null && typeof value === 'object' && 'field' in pe ? (value as Record<string, unknown>)[pe.field] : undefined
  return value
}

/**
 * The managedFields lists this module wrote (an update's entries, an apply's
 * result): encoded here, so readable. Admission's guard need not decode one
 * again unless admission changed it.
 */
const encodedHere = new WeakSet<object>()

function setEntries(obj: KubeObject, entries: unknown[]): void {
  if (entries.length) {
    obj.metadata.managedFields = entries
    encodedHere.add(entries)
  } else delete obj.metadata.managedFields
}

/**
 * Records `ctx.fieldManager`'s change from `live` (undefined on create) to
 * `obj` in `obj.metadata.managedFields`: on the request object as decoded
 * and defaulted, before admission and the strategy change it (upstream's
 * handlers run the field manager there). Writes of the server's own
 * controllers, which name no manager, leave the entries as they are.
 */
export async function recordUpdate(
  entry: ResourceEntry,
  apiVersion: string,
  obj: KubeObject,
  live: KubeObject | undefined,
  ctx: RequestContext,
  subresource?: string,
  steps?: WriteSteps,
): Promise<void> {
  if (!ctx.fieldManager || ctx.apply || !tracked(entry)) return
  if (subresource === 'scale') {
    const replicasPath = replicasPathOf(entry)
    const write = { parentEntries: live?.metadata.managedFields, parentApiVersion: apiVersion, replicasPath, manager: ctx.fieldManager, now: ctx.now }
    setEntries(obj, scaleManagedFields({ ...write, oldReplicas: valueAt(live, replicasPath), newReplicas: valueAt(obj, replicasPath) }))
    return
  }
  const passes = steps ?? WriteSteps.for(obj, live)
  const options = optionsFor(entry, apiVersion, ctx.now, subresource)
  if (passes.sliced) options.inSteps = true
  setEntries(obj, await passes.run(updateManagedFieldsInSteps(live, obj, ctx.fieldManager, options)))
}

/** Upstream's warning when a mutating step left managedFields that cannot be read. */
const INVALID_AFTER_ADMISSION =
  '.metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: '

/**
 * Upstream's managed-fields validating admission wrapper: managedFields are
 * recorded before mutating admission, so a step that leaves them unreadable
 * gets them put back as they were, and the client a warning.
 */
export function guardManagedFields(admission: MutatingAdmission): MutatingAdmission {
  return {
    name: admission.name,
    handles: (operation) => admission.handles(operation),
    async admit(attributes) {
      const object = attributes.object
      // A delete carries no object: nothing of it to guard.
      if (!object) return admission.admit(attributes)
      const before = object.metadata.managedFields
      // Entries written here are readable, and no plugin changes them in place: the built-in ones leave them be,
      // a webhook's patch or a policy's mutation makes a new object, sharing what it did not change. Those need
      // neither a copy to restore nor a second decode unless admission replaced them (for an object of long
      // lists, entries of megabytes: copying and decoding them took longer than the rest of the write).
      const writtenHere = before !== undefined && encodedHere.has(before)
      const restorable: unknown = writtenHere ? before : cloneJson(before)
      await admission.admit(attributes)
      const meta = (attributes.object ?? object).metadata
      if (writtenHere && meta.managedFields === before) return
      try {
        decodeManagedFields(meta.managedFields)
      } catch (err) {
        if (!(err instanceof ManagedFieldsDecodeError)) throw err
        if (restorable === undefined) delete meta.managedFields
        else meta.managedFields = restorable as unknown[]
        attributes.warnings.push(INVALID_AFTER_ADMISSION + err.message)
      }
    },
  }
}

/** 400 unless the apply configuration's apiVersion is the request's: upstream's first check of one. */
export function checkApplyVersion(applied: Record<string, unknown>, apiVersion: string): void {
  try {
    checkAppliedVersion(applied, apiVersion)
  } catch (err) {
    throw err instanceof ApplyInvalidError ? badRequest(err.message) : err
  }
}

/** The object `applied` makes of `live` (undefined: the apply creates it), its managedFields set. */
export async function applyConfiguration(
  entry: ResourceEntry,
  apiVersion: string,
  live: KubeObject | undefined,
  applied: Record<string, unknown>,
  ctx: RequestContext,
  subresource?: string,
  steps?: WriteSteps,
): Promise<KubeObject> {
  if (!tracked(entry)) throw badRequest(`apply is not supported for ${entry.resource}`)
  try {
    const passes = steps ?? WriteSteps.for(applied, live)
    const options = extended(optionsFor(entry, apiVersion, ctx.now, subresource), { force: ctx.apply?.force ?? false, inSteps: passes.sliced })
    const { object, managedFields } = await passes.run(applyObjectInSteps(live, applied, ctx.fieldManager ?? '', options))
    if (managedFields.length > 0) encodedHere.add(managedFields)
    return object as KubeObject
  } catch (err) {
    if (err instanceof ApplyConflictError) throw new StatusError(409, 'Conflict', err.message, { causes: err.causes })
    if (err instanceof ApplyInvalidError && err.problem === 'typing' && entry.schema) throw new UntypedApplyError(err.message)
    if (err instanceof ApplyInvalidError) throw badRequest(err.message)
    throw err
  }
}
