/**
 * Reading fields of stored objects for table cells: objects are plain JSON
 * whose shape was checked on the way in, but any field may be absent.
 */
import { isPlainObject } from '../../machinery/object.js'

/** The value at a path of field names and list indexes, or undefined. */
export function at(obj: unknown, ...path: (string | number)[]): unknown {
  let v: unknown = obj
  for (const step of path) {
    if (typeof step === 'number') v = Array.isArray(v) ? v[step] : undefined
    else v = isPlainObject(v) ? v[step] : undefined
    if (v === undefined) return undefined
  }
  return v
}

export function text(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

export function int(v: unknown): number {
  return typeof v === 'number' ? v : 0
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

export function record(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {}
}

/** A list field's items as objects, anything else as an empty one, so that each keeps its index in error paths. */
export function objectItems(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.map(record) : []
}

/** A quantity as it is stored (a string) or as a client sent it (a number). */
export function quantity(v: unknown): string {
  if (typeof v === 'number') return String(v)
  return typeof v === 'string' ? v : ''
}

/** A cell that shows the string at a path ('' when absent). */
export function textAt(...path: (string | number)[]): (obj: unknown) => string {
  return (obj) => text(at(obj, ...path))
}

/** A cell that shows the number at a path (0 when absent). */
export function intAt(...path: (string | number)[]): (obj: unknown) => number {
  return (obj) => int(at(obj, ...path))
}
