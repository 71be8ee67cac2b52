/**
 * A cross-flag rule reads the parsed command line and returns the
 * problems it finds, each a message naming the flags involved; empty when
 * all is well. Field-style messages use upstream's wording
 * (`--flag: Unsupported value: "x": supported values: ...`).
 */
import { errorText, fieldPath, forbiddenField, invalid, notSupported } from '../../../machinery/field.js'
import type { ParsedFlags } from '../parse.js'

export type Rule = (flags: ParsedFlags) => string[]

export function unsupported(flag: string, value: unknown, allowed: readonly string[]): string {
  return errorText(notSupported(fieldPath(`--${flag}`), value, allowed))
}

export function invalidValue(flag: string, value: unknown, detail: string): string {
  return errorText(invalid(fieldPath(`--${flag}`), value, detail))
}

export function forbidden(flag: string, detail: string): string {
  return errorText(forbiddenField(fieldPath(`--${flag}`), detail))
}

/** The problem when `value` is not one of `allowed`; empty otherwise. */
export function oneOf(flag: string, value: string, allowed: readonly string[]): string[] {
  return allowed.includes(value) ? [] : [unsupported(flag, value, allowed)]
}
