/**
 * The options of a create, update or patch: `dryRun` and `fieldManager`,
 * which upstream reads from the query alone (the body is the object) and
 * checks as its CreateOptions, UpdateOptions and PatchOptions: a 422 on that
 * kind, e.g. `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported
 * value: []string{"Some"}: supported values: "All"`.
 */
import { type FieldError, fieldPath, invalid, invalidError, tooLong, withFieldErrorCap } from '../machinery/field.js'
import { utf8LengthUpTo } from '../machinery/utf8-length.js'
import { dryRunErrors } from './deletion.js'
import { appendAll } from '../machinery/append-all.js'

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'

export interface WriteOptions {
  dryRun: boolean
  fieldManager: string | null
}

/** Upstream's FieldManagerMaxLength, in bytes. */
const MAX_FIELD_MANAGER_BYTES = 128

/**
 * Upstream's ValidateFieldManager and ValidateDryRun over the query: at most
 * 128 bytes of printable characters, and no dry run directive but `All`.
 */
export function writeOptionErrors(params: URLSearchParams): FieldError[] {
  // A control character for each byte of a megabyte's query is an error each: the first MAX_FIELD_ERRORS are kept.
  return withFieldErrorCap(() => fieldManagerAndDryRunErrors(params))
}

function fieldManagerAndDryRunErrors(params: URLSearchParams): FieldError[] {
  const errs: FieldError[] = []
  const manager = params.get('fieldManager') ?? ''
  if (utf8LengthUpTo(manager, MAX_FIELD_MANAGER_BYTES) > MAX_FIELD_MANAGER_BYTES) errs.push(tooLong(fieldPath('fieldManager'), MAX_FIELD_MANAGER_BYTES))
  // A query may carry a megabyte of it: each character is looked at once, without an encoder or a pattern for ASCII.
  let position = 0
  for (const ch of manager) {
    const code = ch.codePointAt(0)!
    if (!isPrintable(ch, code)) errs.push(invalid(fieldPath('fieldManager'), manager, `invalid character ${goUnicode(code)} (at position ${position})`))
    position += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
  }
  appendAll(errs, dryRunErrors(params.has('dryRun') ? params.getAll('dryRun') : undefined))
  return errs
}

/**
 * The write's options; for a create or update also checked here (a patch's
 * are checked with the rest of its PatchOptions once its type is known).
 */
export function writeOptionsOf(params: URLSearchParams, kind: WriteOptionsKind): WriteOptions {
  if (kind !== 'PatchOptions') {
    const errs = writeOptionErrors(params)
    if (errs.length) throw invalidError('meta.k8s.io', kind, '', errs)
  }
  return { dryRun: params.getAll('dryRun').length > 0, fieldManager: params.get('fieldManager') }
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(ch: string, code: number): boolean {
  if (code < 0x80) return code >= 0x20 && code < 0x7f
  return PRINTABLE.test(ch)
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u

/** Go's `%#U` of a character that is not printable: `U+0009`. */
function goUnicode(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
}
