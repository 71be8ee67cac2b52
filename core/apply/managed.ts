/**
 * metadata.managedFields: the wire entries and the in-memory form the apply
 * and update algorithms work on (one field set per manager identity).
 * A manager's identity is its entry without time and fields, JSON-encoded as
 * upstream's BuildManagerIdentifier does; appliers are identified without
 * their apiVersion, so one applier keeps one entry across versions.
 */
import type { Checkpointed } from '../machinery/time-slice.js'
import { FieldSet } from './fieldset.js'

export interface ManagedFieldsEntry {
  manager?: string
  operation?: 'Apply' | 'Update'
  apiVersion?: string
  time?: string
  fieldsType?: 'FieldsV1'
  fieldsV1?: Record<string, unknown>
  subresource?: string
}

export interface ManagerSet {
  set: FieldSet
  apiVersion: string
  /** operation Apply */
  applied: boolean
  time?: string
}

/** Manager identity (JSON) → what that manager owns. */
export type Managed = Map<string, ManagerSet>

export class ManagedFieldsDecodeError extends Error {
  override name = 'ManagedFieldsDecodeError'
}

/** The identity string of an entry, key order as Go marshals ManagedFieldsEntry. */
export function managerIdentifier(entry: {
  manager?: string
  operation?: string
  apiVersion?: string
  subresource?: string
}): string {
  const id: Record<string, string> = {}
  if (entry.manager) id['manager'] = entry.manager
  if (entry.operation) id['operation'] = entry.operation
  if (entry.apiVersion && entry.operation !== 'Apply') id['apiVersion'] = entry.apiVersion
  if (entry.subresource) id['subresource'] = entry.subresource
  return JSON.stringify(id)
}

/** The identity a request's manager name gets (an empty name is `unknown`). */
export function identifierFor(manager: string, operation: 'Apply' | 'Update', apiVersion: string, subresource?: string): string {
  return managerIdentifier({ manager: manager || 'unknown', operation, apiVersion, subresource })
}

export function parseIdentifier(id: string): { manager?: string; operation?: string; apiVersion?: string; subresource?: string } {
  try {
    return JSON.parse(id) as Record<string, string>
  } catch {
    return { manager: id }
  }
}

/** Reads entries as sent or stored; throws with upstream's wording on the first bad entry. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed: Managed = new Map()
  if (entries === undefined || entries === null) return managed
  if (!Array.isArray(entries)) throw new ManagedFieldsDecodeError('managedFields must be a list')
  entries.forEach((raw: unknown, i) => {
    const e = (raw ?? {}) as ManagedFieldsEntry
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsDecodeError('operation must be `Apply` or `Update`')
    if (!e.apiVersion) throw new ManagedFieldsDecodeError('apiVersion must not be empty')
    if (e.fieldsType === undefined || (e.fieldsType as string) === '') {
      throw new ManagedFieldsDecodeError(`missing fieldsType in managed fields entry ${i}`)
    }
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsDecodeError(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`)
    let set: FieldSet
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1)
    } catch (err) {
      throw new ManagedFieldsDecodeError(`error decoding versioned set: error decoding set: ${(err as Error).message}`)
    }
    managed.set(managerIdentifier(e), { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply', time: e.time })
  })
  return managed
}

/** Decodes, or yields no managers when the entries cannot be read. */
export function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries)
  } catch {
    return new Map()
  }
}

/** A request asks to clear managedFields with `[]` or a single empty entry. */
export function isResetManagedFields(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false
  if (entries.length === 0) return true
  if (entries.length !== 1) return false
  const only: unknown = entries[0]
  return only === null || (typeof only === 'object' && Object.keys(only as object).length === 0)
}

function seconds(time: string | undefined): number {
  if (!time) return 0
  const ms = Date.parse(time)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}

/** Upstream's order: by operation, then time (seconds), manager, apiVersion, subresource. */
export function sortManagedFields(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  const cmp = (a: string | undefined, b: string | undefined): number => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0)
  return [...entries].sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource, q.subresource),
  )
}

/** The wire entries, sorted; empty field sets are dropped. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = []
  for (const [id, vs] of managed) if (!vs.set.isEmpty()) entries.push(entryOf(id, vs, vs.set.toFieldsV1()))
  return sortManagedFields(entries)
}

/** encodeManagedFields as checkpointed work, for the sets of an object of megabytes (`inSteps`); at once otherwise. */
export function* encodeManagedFieldsInSteps(managed: Managed, inSteps: boolean | undefined): Checkpointed<ManagedFieldsEntry[]> {
  if (!inSteps) return encodeManagedFields(managed)
  const entries: ManagedFieldsEntry[] = []
  for (const [id, vs] of managed) if (!vs.set.isEmpty()) entries.push(entryOf(id, vs, yield* vs.set.toFieldsV1InSteps()))
  return sortManagedFields(entries)
}

function entryOf(id: string, vs: ManagerSet, fieldsV1: Record<string, unknown>): ManagedFieldsEntry {
  const who = parseIdentifier(id)
  const entry: ManagedFieldsEntry = {}
  if (who.manager) entry.manager = who.manager
  entry.operation = vs.applied ? 'Apply' : ((who.operation as 'Update' | undefined) ?? 'Update')
  entry.apiVersion = vs.apiVersion
  if (vs.time) entry.time = vs.time
  entry.fieldsType = 'FieldsV1'
  entry.fieldsV1 = fieldsV1
  if (who.subresource) entry.subresource = who.subresource
  return entry
}

/** Fields never owned by anyone: type meta and server-set metadata. */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  [{ field: 'apiVersion' }],
  [{ field: 'kind' }],
  [{ field: 'metadata' }],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (f) => [{ field: 'metadata' }, { field: f }],
  ),
)

/** The manager's set without the stripped fields; the manager is dropped when nothing is left. */
export function stripManager(managed: Managed, id: string): void {
  const vs = managed.get(id)
  if (!vs) return
  const set = vs.set.difference(STRIPPED_FIELDS)
  if (set.isEmpty()) managed.delete(id)
  else managed.set(id, { ...vs, set })
}

/** At most this many Update entries are kept; older ones merge into `ancient-changes`. */
export const MAX_UPDATE_MANAGERS = 10

export function capUpdateManagers(managed: Managed, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.entries()].filter(([, vs]) => !vs.applied).map(([id]) => id)
  if (updaters.length <= max) return
  updaters.sort((a, b) => seconds(managed.get(a)?.time) - seconds(managed.get(b)?.time) || (a < b ? -1 : a > b ? 1 : 0))
  const firstOfVersion = new Map<string, string>()
  let length = updaters.length
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i] as string
    const vs = managed.get(id) as ManagerSet
    const bucket = managerIdentifier({ manager: 'ancient-changes', operation: 'Update', apiVersion: vs.apiVersion })
    const first = firstOfVersion.get(vs.apiVersion)
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id)
      continue
    }
    if (!managed.has(bucket)) {
      managed.set(bucket, managed.get(first) as ManagerSet)
      managed.delete(first)
    }
    const into = managed.get(bucket) as ManagerSet
    managed.set(bucket, { set: vs.set.union(into.set), apiVersion: vs.apiVersion, applied: vs.applied, time: vs.time })
    managed.delete(id)
    length--
  }
}
