/**
 * Values as upstream's field errors print them: a struct as Go's `%#v`
 * (`rbac.RoleRef{APIGroup:"g", Kind:"Role", Name:"r"}`), a time as
 * `time.Time.String()`. Messages that show a whole struct read the same here.
 */
import { GoLiteral } from '../../validation/field.js'
import { record } from '../columns/values.js'

/** One struct field: its Go name, its JSON name, and whether it is a number. */
export type GoField = readonly [goName: string, jsonName: string, kind?: 'int' | 'string']

/** `pkg.Type{A:"x", B:0}` from a JSON object, zero values for absent fields. */
export function goStruct(typeName: string, fields: readonly GoField[], value: unknown): GoLiteral {
  const obj = record(value)
  const parts = fields.map(([goName, jsonName, kind]) => {
    const v = obj[jsonName]
    if (kind === 'int') return `${goName}:${typeof v === 'number' ? v : 0}`
    return `${goName}:${JSON.stringify(typeof v === 'string' ? v : '')}`
  })
  return new GoLiteral(`${typeName}{${parts.join(', ')}}`)
}

/** Go's `time.Time.String()` of a stored (UTC) timestamp; the zero time when absent. */
export function goTime(value: unknown): GoLiteral {
  if (typeof value !== 'string' || value === '') return new GoLiteral('0001-01-01 00:00:00 +0000 UTC')
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(value)
  if (!m) return new GoLiteral(value)
  const fraction = (m[3] ?? '').replace(/0+$/, '')
  return new GoLiteral(`${m[1]} ${m[2]}${fraction ? `.${fraction}` : ''} +0000 UTC`)
}

/** A string-valued int-or-string as Go prints it (`intstr.IntOrString{Type:1, IntVal:0, StrVal:"5x"}`). */
export function goIntOrString(value: unknown): GoLiteral {
  if (typeof value === 'number') return new GoLiteral(`intstr.IntOrString{Type:0, IntVal:${value}, StrVal:""}`)
  return new GoLiteral(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(String(value))}}`)
}
