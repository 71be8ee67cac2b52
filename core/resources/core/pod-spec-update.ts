/**
 * upstream's ValidatePodUpdate for the spec: a running pod's spec is fixed
 * except for its images, a shorter active deadline, added tolerations,
 * removed scheduling gates and a negative grace period raised to 1.
 */
import { type FieldError, type FieldPath, forbiddenField, invalid } from '../../machinery/field.js'
import { cloneJson, isPlainObject } from '../../machinery/object.js'
import { objects } from './pod-spec-defaults.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const MAX_INT32 = 2147483647

export const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'

const equal = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical)
  if (!isPlainObject(v)) return v
  return Object.fromEntries(
    Object.keys(v)
      .filter((k) => v[k] !== undefined && v[k] !== null)
      .sort()
      .map((k) => [k, canonical(v[k])]),
  )
}

/** The changed fields, one `- old` and `+ new` line pair each, for the forbidden-update message. */
export function describeChanges(old: unknown, next: unknown, at: string, out: string[]): void {
  if (equal(old, next)) return
  if (isPlainObject(old) && isPlainObject(next)) {
    for (const k of new Set([...Object.keys(old), ...Object.keys(next)])) describeChanges(old[k], next[k], `${at}.${k}`, out)
    return
  }
  if (Array.isArray(old) && Array.isArray(next) && old.length === next.length) {
    old.forEach((o, i) => describeChanges(o, next[i], `${at}[${i}]`, out))
    return
  }
  out.push(`- ${at}: ${JSON.stringify(old ?? null)}`, `+ ${at}: ${JSON.stringify(next ?? null)}`)
}

function validateDeadline(next: unknown, old: unknown, path: FieldPath): FieldError[] {
  if (typeof next === 'number') {
    if (next < 0 || next > MAX_INT32) return [invalid(path, next, 'must be between 0 and 2147483647, inclusive')]
    if (typeof old === 'number' && next > old) return [invalid(path, next, 'must be less than or equal to previous value')]
    return []
  }
  return typeof old === 'number' ? [invalid(path, null, 'must not update from a positive integer to nil value')] : []
}

/** Existing tolerations stay as they were (their tolerationSeconds aside); new ones may be added. */
function validateTolerations(next: unknown, old: unknown, path: FieldPath): FieldError[] {
  const without = (t: Obj): Obj => ({ ...t, tolerationSeconds: undefined })
  const added = objects(next).map(without)
  const kept = objects(old).every((o) => added.some((n) => equal(without(o), n)))
  return kept ? [] : [forbiddenField(path, 'existing toleration can not be modified except its tolerationSeconds')]
}

export function validatePodSpecUpdate(next: Obj, old: Obj, path: FieldPath): FieldError[] {
  const containers = objects(next['containers'])
  const oldContainers = objects(old['containers'])
  const inits = objects(next['initContainers'])
  const oldInits = objects(old['initContainers'])
  if (containers.length !== oldContainers.length || inits.length !== oldInits.length)
    return [forbiddenField(path.child(containers.length !== oldContainers.length ? 'containers' : 'initContainers'), 'pod updates may not add or remove containers')]
  const errs = validateDeadline(next['activeDeadlineSeconds'], old['activeDeadlineSeconds'], path.child('activeDeadlineSeconds'))
  if (objects(next['ephemeralContainers']).length !== objects(old['ephemeralContainers']).length)
    errs.push(forbiddenField(path.child('ephemeralContainers'), 'cannot be changed'))
  appendAll(errs, validateTolerations(next['tolerations'], old['tolerations'], path.child('tolerations')))
  const oldGates = objects(old['schedulingGates']).map((g) => g['name'])
  for (const gate of objects(next['schedulingGates']))
    if (!oldGates.includes(gate['name']))
      errs.push(forbiddenField(path.child('schedulingGates'), `only deletion is allowed, but found new scheduling gate '${String(gate['name'])}'`))

  // Fold every permitted change back into the old values: anything left over is forbidden.
  const munged = cloneJson(next)
  const mungedContainers = objects(munged['containers'])
  const mungedInits = objects(munged['initContainers'])
  oldContainers.forEach((c, i) => (mungedContainers[i]!['image'] = c['image']))
  oldInits.forEach((c, i) => (mungedInits[i]!['image'] = c['image']))
  for (const key of ['activeDeadlineSeconds', 'tolerations', 'schedulingGates', 'ephemeralContainers']) munged[key] = old[key]
  const grace = old['terminationGracePeriodSeconds']
  if (typeof grace === 'number' && grace < 0 && next['terminationGracePeriodSeconds'] === 1) munged['terminationGracePeriodSeconds'] = grace
  if (!equal(munged, old)) {
    const changes: string[] = []
    describeChanges(old, munged, String(path), changes)
    errs.push(forbiddenField(path, `${POD_UPDATE_FORBIDDEN}\n${changes.map((l) => `  ${l}`).join('\n')}`))
  }
  return errs
}
