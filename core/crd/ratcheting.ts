/**
 * Validation ratcheting (upstream's CRDValidationRatcheting, on by default):
 * an update may keep a value the schema has since come to refuse, as long
 * as it does not change it. A schema error at a field whose value is the
 * same in the stored object is dropped; a missing required field counts as
 * unchanged when the object that should hold it is.
 */
import { at } from '../resources/columns/values.js'
import type { FieldError } from '../machinery/field.js'
import { sameJson } from '../machinery/same-json.js'

/** `spec.items[0].name` or `spec.labels[a.b/c]` as the steps from the root (list indexes as numbers). */
function steps(field: string): (string | number)[] {
  const out: (string | number)[] = []
  let i = 0
  let name = ''
  while (i < field.length) {
    const ch = field[i]
    if (ch === '.') {
      if (name) out.push(name)
      name = ''
      i++
    } else if (ch === '[') {
      if (name) out.push(name)
      name = ''
      const end = field.indexOf(']', i)
      if (end < 0) return []
      const inside = field.slice(i + 1, end)
      out.push(/^\d+$/.test(inside) ? Number(inside) : inside)
      i = end + 1
    } else {
      name += ch
      i++
    }
  }
  if (name) out.push(name)
  return out
}

/** Whether an update still has to answer for an error: it is at a field the update changed. */
export function stillCounts(err: FieldError, obj: unknown, old: unknown): boolean {
  const path = steps(err.field)
  if (path.length === 0) return true
  const where = err.type === 'FieldValueRequired' ? path.slice(0, -1) : path
  const before = at(old, ...where)
  return before === undefined || !sameJson(at(obj, ...where), before)
}

/** The errors an update still has to answer for: those at fields it changed. */
export function ratchet(errors: readonly FieldError[], obj: unknown, old: unknown): FieldError[] {
  return errors.filter((err) => stillCounts(err, obj, old))
}
