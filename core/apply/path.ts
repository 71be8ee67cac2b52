/**
 * Path elements of server-side apply field paths and their two textual
 * forms: the FieldsV1 keys (`f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`) and
 * the human form used in conflict messages (`.spec.containers[name="x"].image`).
 * Ordering and wording follow structured-merge-diff's fieldpath package, so
 * serialised sets and messages match what upstream writes.
 */

import { jsonTooDeepAt } from '../machinery/limits.js'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

export type PathElement =
  /** a struct field or map key */
  | { field: string }
  /** an item of a list with listType map: its key fields, sorted by name */
  | { key: [string, Json][] }
  /** an item of a list with listType set: the item itself */
  | { value: Json }
  /** an item of a list without identity; only seen in FieldsV1 written by others */
  | { index: number }

export type Path = readonly PathElement[]

export class FieldsV1ParseError extends Error {
  override name = 'FieldsV1ParseError'
}

function typeRank(v: Json): number {
  if (typeof v === 'number') return 0
  if (typeof v === 'string') return 1
  if (typeof v === 'boolean') return 2
  if (Array.isArray(v)) return 3
  if (v !== null && typeof v === 'object') return 4
  return 5
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** A total order over JSON values: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: Json, b: Json): number {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  if (typeof a === 'number') return Math.sign(a - (b as number))
  if (typeof a === 'string') return compareStrings(a, b as string)
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1
  if (Array.isArray(a)) {
    const bl = b as Json[]
    for (let i = 0; i < Math.min(a.length, bl.length); i++) {
      const c = compareValues(a[i] as Json, bl[i] as Json)
      if (c !== 0) return c
    }
    return Math.sign(a.length - bl.length)
  }
  if (a !== null && typeof a === 'object') {
    const ak = Object.keys(a).sort()
    const bo = b as { [key: string]: Json }
    const bk = Object.keys(bo).sort()
    for (let i = 0; i < Math.min(ak.length, bk.length); i++) {
      const c = compareStrings(ak[i] as string, bk[i] as string) || compareValues(a[ak[i] as string] as Json, bo[bk[i] as string] as Json)
      if (c !== 0) return c
    }
    return Math.sign(ak.length - bk.length)
  }
  return 0
}

function compareKeys(a: [string, Json][], b: [string, Json][]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [an, av] = a[i] as [string, Json]
    const [bn, bv] = b[i] as [string, Json]
    const c = compareStrings(an, bn) || compareValues(av, bv)
    if (c !== 0) return c
  }
  return Math.sign(a.length - b.length)
}

function rank(pe: PathElement): number {
  if ('field' in pe) return 0
  if ('key' in pe) return 1
  if ('value' in pe) return 2
  return 3
}

/** Fields first (by name), then keys, then set values, then indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field)
  if ('key' in a) return compareKeys(a.key, (b as { key: [string, Json][] }).key)
  if ('value' in a) return compareValues(a.value, (b as { value: Json }).value)
  return Math.sign(a.index - (b as { index: number }).index)
}

/** A scalar as Go's `%v`/`%q` prints it in upstream's path strings. */
function valueText(v: Json): string {
  if (v === null) return 'null'
  if (typeof v === 'string') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(valueText).join(',')}]`
  if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}=${valueText(x)}`).join(',')}}`
  return String(v)
}

export function elementText(pe: PathElement): string {
  if ('field' in pe) return `.${pe.field}`
  if ('key' in pe) return `[${pe.key.map(([k, v]) => `${k}=${valueText(v)}`).join(',')}]`
  if ('value' in pe) return `[=${valueText(pe.value)}]`
  return `[${pe.index}]`
}

/** `.spec.containers[name="nginx"].image`, as upstream prints a path. */
export function formatPath(path: Path): string {
  return path.map(elementText).join('')
}

/** JSON as Go's encoder writes it: `<`, `>`, `&` and line separators escaped. */
export function goJson(v: Json): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The FieldsV1 key of one path element. */
export function serializeElement(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`
  if ('key' in pe) return `k:{${pe.key.map(([k, v]) => `${goJson(k)}:${goJson(v)}`).join(',')}}`
  if ('value' in pe) return `v:${goJson(pe.value)}`
  return `i:${pe.index}`
}

/** Thrown for a key of a type that a later version may know; such keys are skipped. */
export class UnknownElementType extends Error {}

/**
 * A key's JSON value. One nested past MAX_NESTING_DEPTH is refused before it
 * is parsed, as any value nested that deeply is (limits.ts): the walks over a
 * field set (sorting, writing FieldsV1 back) recurse into it. Upstream's
 * reader refuses past its own, deeper bound, with these words.
 */
function parseJson(text: string, whole: string): Json {
  if (jsonTooDeepAt(text) !== undefined) throw new FieldsV1ParseError('parsing key as path element: incrementDepth: exceeded max depth')
  try {
    return JSON.parse(text) as Json
  } catch (err) {
    throw new FieldsV1ParseError(`parsing key as path element: ${(err as Error).message} in ${JSON.stringify(whole)}`)
  }
}

export function deserializeElement(s: string): PathElement {
  if (s.length < 2) throw new FieldsV1ParseError('parsing key as path element: key must be 2 characters long:')
  if (s[1] !== ':') throw new FieldsV1ParseError(`parsing key as path element: missing colon: ${s}`)
  const body = s.slice(2)
  switch (s[0]) {
    case 'f':
      return { field: body }
    case 'v':
      return { value: parseJson(body, s) }
    case 'k': {
      const parsed = parseJson(body, s)
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new FieldsV1ParseError(`parsing key as path element: ReadObjectCB: expect { or n in ${JSON.stringify(s)}`)
      }
      const key = Object.entries(parsed).sort(([a], [b]) => compareStrings(a, b))
      return { key }
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) {
        throw new FieldsV1ParseError(`parsing key as path element: strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`)
      }
      return { index: Number(body) }
    }
    default:
      throw new UnknownElementType(s)
  }
}

export function elementsEqual(a: PathElement, b: PathElement): boolean {
  return compareElements(a, b) === 0
}

/**
 * A value as text that is the same exactly when compareValues finds two
 * values equal: object keys sorted, null and undefined alike. Unlike the
 * FieldsV1 form it does not depend on the order an object's keys came in.
 */
function valueId(v: unknown): string {
  if (typeof v === 'number') return String(v)
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (Array.isArray(v)) return `[${v.map(valueId).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${valueId(o[k])}`).join(',')}}`
  }
  return 'null'
}

/**
 * The identity of an element as a string, equal for two elements exactly
 * when elementsEqual is: lists index their items by it in a Map, where
 * comparing each item with every other stalled the server for seconds on a
 * list of thousands (upstream looks items up by their element too, in a
 * sorted PathElementValueMap).
 */
export function elementId(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`
  if ('key' in pe) return `k:${pe.key.map(([name, v]) => `${JSON.stringify(name)}:${valueId(v)}`).join(',')}`
  if ('value' in pe) return `v:${valueId(pe.value)}`
  return `i:${pe.index}`
}
