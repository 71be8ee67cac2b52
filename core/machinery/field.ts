/**
 * Field errors carry the path built as a validator descends
 * (`fieldPath('spec').child('containers').index(0)`), so every message names
 * the exact field, worded as upstream's `util/validation/field` words it.
 */
import { StatusError } from './status-error.js'
import { formatValue } from './go-format.js'

export class FieldPath {
  /**
   * The path is kept as its parent and last step and written out when first
   * asked for: validating a body of a million list items builds a path for
   * each, and past MAX_FIELD_ERRORS the errors that would show them are
   * never kept, so most paths are never written.
   */
  private text: string | undefined

  private constructor(
    private readonly parent: FieldPath | undefined,
    private readonly step: string | number,
    /** 'child' joins with a dot; 'index' and 'key' go in brackets. */
    private readonly how: 'root' | 'child' | 'index',
  ) {}

  static root(name: string): FieldPath {
    return new FieldPath(undefined, name, 'root')
  }

  child(name: string): FieldPath {
    return new FieldPath(this, name, 'child')
  }

  index(i: number): FieldPath {
    return new FieldPath(this, i, 'index')
  }

  key(k: string): FieldPath {
    return new FieldPath(this, k, 'index')
  }

  toString(): string {
    if (this.text !== undefined) return this.text
    const before = this.parent ? this.parent.toString() : ''
    if (this.how === 'index') this.text = `${before}[${this.step}]`
    else if (this.how === 'child') this.text = before ? `${before}.${this.step}` : String(this.step)
    else this.text = String(this.step)
    return this.text
  }
}

export function fieldPath(name: string): FieldPath {
  return FieldPath.root(name)
}

/** A field the client set: present and not null (in Go, a non-nil pointer, slice or map). */
export const isSet = (v: unknown): boolean => v !== undefined && v !== null

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotFound'
  | 'FieldValueDuplicate'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError'

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotFound: 'Not found',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
}

/** Types whose message shows the offending value, as upstream's ErrorBody does. */
const SHOWS_VALUE = new Set<FieldErrorType>([
  'FieldValueInvalid',
  'FieldValueNotFound',
  'FieldValueDuplicate',
  'FieldValueNotSupported',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
])

export interface FieldError {
  type: FieldErrorType
  field: string
  value?: unknown
  detail: string
  /** Set when the error names no value (upstream's field.OmitValueType): `Invalid value: <detail>`. */
  omitsValue?: boolean
}

/**
 * The most field errors one validation keeps. Upstream keeps every one; a
 * body of 3 MiB holds a million invalid items, and each error here (its
 * path, its value, its detail) costs a few hundred bytes: hundreds of
 * megabytes held for one request. Past this many, a validation run inside
 * withFieldErrorCap gets the same placeholder for each further error: it
 * is still counted (the request is refused all the same, and the answer
 * counts it in `N more errors not shown`), but it holds nothing.
 */
export const MAX_FIELD_ERRORS = 10_000

/** What an error past MAX_FIELD_ERRORS becomes: one shared object, never shown. */
const NOT_KEPT: FieldError = Object.freeze({ type: 'FieldValueInvalid', field: '', detail: '' })

/** Errors the running validation may still keep; unbounded outside withFieldErrorCap. */
let keepable = Infinity
/** Which errors the running validation counts at all (the others, ratcheted away, are kept as made and cost nothing of the bound). */
let counted: ((e: FieldError) => boolean) | undefined

/**
 * Runs a synchronous validation keeping at most MAX_FIELD_ERRORS of the
 * errors it makes (the first ones); the others are placeholders that
 * invalidError counts without showing. Synchronous only: the bound is the
 * module's while `validate` runs.
 */
export function withFieldErrorCap<T>(validate: () => T): T {
  if (keepable !== Infinity) return validate()
  keepable = MAX_FIELD_ERRORS
  try {
    return validate()
  } finally {
    keepable = Infinity
  }
}

/**
 * The same bound over a validation run in steps (a generator other requests
 * run between): the bound is set for each step and what is left carried to
 * the next. `counts` says which errors the bound counts: an update's schema
 * errors that ratcheting drops later are kept as made.
 */
export function* withFieldErrorCapInSteps<T>(work: Generator<void, T, void>, counts?: (e: FieldError) => boolean): Generator<void, T, void> {
  let left = MAX_FIELD_ERRORS
  for (;;) {
    const outer = { keepable, counted }
    keepable = left
    counted = counts
    let step: IteratorResult<void, T>
    try {
      step = work.next()
    } finally {
      left = keepable
      ;({ keepable, counted } = outer)
    }
    if (step.done) return step.value
    yield
  }
}

/**
 * True once the running validation keeps no more errors and counts every
 * one: an error made now is the placeholder whatever it says, so the
 * constructors below return it before writing out the path or the detail.
 */
function keepsNoMore(): boolean {
  return keepable <= 0 && counted === undefined
}

/** An error as made, or the placeholder once the running validation keeps no more: every FieldError goes through it. */
export function kept(e: FieldError): FieldError {
  if (keepable === Infinity) return e
  if (counted && !counted(e)) return e
  if (keepable <= 0) return NOT_KEPT
  keepable--
  return e
}

/** The part after `<field>: `, e.g. `Invalid value: "x": must be ...`. */
export function errorBody(e: FieldError): string {
  let body = TYPE_TEXT[e.type]
  if (SHOWS_VALUE.has(e.type) && !e.omitsValue) body += `: ${formatValue(e.value)}`
  if (e.detail) body += `: ${e.detail}`
  return body
}

export function errorText(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`
}

export const required = (path: FieldPath, detail = ''): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueRequired',
    field: String(path),
    detail,
  })

export const invalid = (path: FieldPath, value: unknown, detail: string): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueInvalid',
    field: String(path),
    value,
    detail,
  })

/** An Invalid error about a field as a whole, without its value (upstream passes field.OmitValueType{}). */
export const invalidWithoutValue = (path: FieldPath, detail: string): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueInvalid',
    field: String(path),
    detail,
    omitsValue: true,
  })

/** upstream's field.NotFound: a reference to something that does not exist (`Not found: "vol"`). */
export const notFoundField = (path: FieldPath, value: unknown): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueNotFound',
    field: String(path),
    value,
    detail: '',
  })

export const duplicate = (path: FieldPath, value: unknown): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueDuplicate',
    field: String(path),
    value,
    detail: '',
  })

/** upstream's NotSupported detail: every supported value, quoted. */
export const supportedValues = (supported: readonly string[]): string =>
  supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : ''

export const notSupported = (path: FieldPath, value: unknown, supported: readonly string[]): FieldError =>
  keepsNoMore() ? NOT_KEPT : notSupportedWith(path, value, supportedValues(supported))

/** The same, with the detail made once by the caller (supportedValues) for a long list checked many times. */
export const notSupportedWith = (path: FieldPath, value: unknown, detail: string): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueNotSupported',
    field: String(path),
    value,
    detail,
  })

export const forbiddenField = (path: FieldPath, detail: string): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueForbidden',
    field: String(path),
    detail,
  })

export const tooLong = (path: FieldPath, maxBytes: number): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueTooLong',
    field: String(path),
    detail: `may not be more than ${maxBytes} bytes`,
  })

/** upstream's field.TooMany: `Too many: 65: must have at most 64 items`. */
export const tooMany = (path: FieldPath, actual: number, max: number): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueTooMany',
    field: String(path),
    value: actual,
    detail: `must have at most ${max} items`,
  })

export const typeInvalid = (path: FieldPath, value: unknown, detail: string): FieldError =>
  keepsNoMore()
    ? NOT_KEPT
    : kept({
    type: 'FieldValueTypeInvalid',
    field: String(path),
    value,
    detail,
  })

/** `Kind` for the core group, `Kind.group` otherwise: upstream's GroupKind.String(). */
export function qualifiedKind(group: string, kind: string): string {
  return group ? `${kind}.${group}` : kind
}

/**
 * The most text of field errors one Invalid answer carries (the message
 * and the causes each hold it once). Upstream puts every error in both;
 * a body can make very many, each long (5,000 failed items of an enum of
 * 20,000 values, each naming every value, or messages of 5 kB from a CRD
 * rule on 100,000 items): gigabytes of text, past what a string here may
 * hold. The errors past the bound are counted instead of listed.
 */
export const MAX_INVALID_TEXT_BYTES = 1024 * 1024

/** 422 Invalid with one cause per field error, as upstream's NewInvalid builds it (within MAX_INVALID_TEXT_BYTES). */
export function invalidError(group: string, kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const subject = `${qualifiedKind(group, kind)} ${JSON.stringify(name)} is invalid`
  const shown: FieldError[] = []
  const shownTexts: string[] = []
  let size = 0
  for (const e of errors) {
    // The first placeholder ends what is shown: the causes stay the first errors, in order.
    if (e === NOT_KEPT) break
    // Concatenated, not yet copied: its length is known without building it.
    const text = errorText(e)
    if (shown.length > 0 && size + text.length > MAX_INVALID_TEXT_BYTES) break
    size += text.length
    shown.push(e)
    shownTexts.push(text)
  }
  const left = errors.length - shown.length
  // Each text once, as upstream's ErrorList.ToAggregate keeps it; the causes keep every error shown.
  const texts = [...new Set(shownTexts)]
  if (left > 0) texts.push(`${left} more errors not shown`)
  const message =
    texts.length === 0 ? subject : texts.length === 1 ? `${subject}: ${texts[0]}` : `${subject}: [${texts.join(', ')}]`
  const details = {
    name,
    kind,
    ...(group ? { group } : {}),
    causes: shown.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
  }
  return new StatusError(422, 'Invalid', message, details)
}

/** Upstream's utilerrors.Aggregate text: one message alone, several in brackets, duplicates once. */
export function aggregateText(errs: readonly FieldError[]): string {
  const texts = [...new Set(errs.map(errorText))]
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`
}
