/**
 * Upstream's apiequality.Semantic.DeepEqual on the JSON form of an object:
 * an absent field equals a null one, and an empty list equals an absent
 * one (Go's nil and empty slices compare equal there). Key order is
 * irrelevant. Quantities are compared as stored, already canonical.
 */
import { isPlainObject } from '../../machinery/object.js'

function normal(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(normal) : undefined
  if (!isPlainObject(v)) return v ?? undefined
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(v).sort()) {
    const value = normal(v[key])
    if (value !== undefined) out[key] = value
  }
  return out
}

export function semanticallyEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(normal(a)) === JSON.stringify(normal(b))
}
