/**
 * Toleration arithmetic of upstream's scheduler helpers: whether one
 * toleration covers another, and merging two lists without redundancy.
 */
import type { Obj } from './pods.js'

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Field by field, an absent string being the empty one (Go's zero value). */
function equal(a: Obj, b: Obj): boolean {
  return sameToleration(a, b) && (a['tolerationSeconds'] ?? null) === (b['tolerationSeconds'] ?? null)
}

/** Whether `wide` tolerates whatever `t` tolerates (upstream's isSuperset). */
export function covers(wide: Obj, t: Obj): boolean {
  if (equal(wide, t)) return true
  // An empty key with Exists matches every key.
  if (str(t['key']) !== str(wide['key']) && (str(wide['key']) !== '' || wide['operator'] !== 'Exists')) return false
  // An empty effect matches every effect.
  if (str(t['effect']) !== str(wide['effect']) && str(wide['effect']) !== '') return false
  if (wide['effect'] === 'NoExecute' && typeof wide['tolerationSeconds'] === 'number') {
    if (typeof t['tolerationSeconds'] !== 'number' || t['tolerationSeconds'] > wide['tolerationSeconds']) return false
  }
  switch (str(wide['operator'])) {
    case '':
    case 'Equal':
      return str(t['operator']) === 'Equal' && str(t['value']) === str(wide['value'])
    case 'Exists':
      return true
    default:
      return false
  }
}

/** Both lists in order, leaving out each toleration another one (kept or later) already covers; of two equal ones the first stays. */
export function mergeTolerations(first: readonly Obj[], second: readonly Obj[]): Obj[] {
  const all = [...first, ...second]
  const merged: Obj[] = []
  all.forEach((t, i) => {
    if (merged.some((kept) => covers(kept, t))) return
    if (all.slice(i + 1).some((later) => !equal(t, later) && covers(later, t))) return
    merged.push(t)
  })
  return merged
}

/** Whether every toleration is covered by one of the allowed ones (upstream's VerifyAgainstWhitelist). */
export function allowedBy(tolerations: readonly Obj[], allowed: readonly Obj[]): boolean {
  return tolerations.every((t) => allowed.some((w) => covers(w, t)))
}

/** Same key, operator, value and effect: upstream's MatchToleration, which ignores tolerationSeconds. */
export function sameToleration(a: Obj, b: Obj): boolean {
  return (['key', 'operator', 'value', 'effect'] as const).every((f) => str(a[f]) === str(b[f]))
}
