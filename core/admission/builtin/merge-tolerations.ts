/**
 * Two lists of tolerations as one (upstream's pkg/util/tolerations
 * MergeTolerations): a toleration another one already covers is dropped,
 * and of two equal ones the first stays.
 */
import { isPlainObject } from '../../machinery/object.js'

export type Toleration = Record<string, unknown>

const text = (t: Toleration, field: string): string => (typeof t[field] === 'string' ? (t[field] as string) : '')
const operatorOf = (t: Toleration): string => text(t, 'operator') || 'Equal'

function sameToleration(a: Toleration, b: Toleration): boolean {
  const fields = ['key', 'effect', 'value'] as const
  return fields.every((f) => text(a, f) === text(b, f)) && operatorOf(a) === operatorOf(b) && a['tolerationSeconds'] === b['tolerationSeconds']
}

/** Whether `wide` tolerates everything `t` does. */
export function coversToleration(wide: Toleration, t: Toleration): boolean {
  if (sameToleration(t, wide)) return true
  // An empty key with Exists matches every key.
  if (text(t, 'key') !== text(wide, 'key') && (text(wide, 'key') !== '' || operatorOf(wide) !== 'Exists')) return false
  // An empty effect matches every effect.
  if (text(t, 'effect') !== text(wide, 'effect') && text(wide, 'effect') !== '') return false
  if (text(wide, 'effect') === 'NoExecute' && typeof wide['tolerationSeconds'] === 'number') {
    const seconds = t['tolerationSeconds']
    if (typeof seconds !== 'number' || seconds > wide['tolerationSeconds']) return false
  }
  if (operatorOf(wide) === 'Exists') return true
  return operatorOf(wide) === 'Equal' && operatorOf(t) === 'Equal' && text(t, 'value') === text(wide, 'value')
}

export function mergeTolerations(first: readonly unknown[], second: readonly unknown[]): Toleration[] {
  const all = [...first, ...second].filter(isPlainObject)
  const merged: Toleration[] = []
  all.forEach((t, i) => {
    if (merged.some((kept) => coversToleration(kept, t))) return
    if (all.slice(i + 1).some((later) => !sameToleration(t, later) && coversToleration(later, t))) return
    merged.push(t)
  })
  return merged
}
