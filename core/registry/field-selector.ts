/**
 * Field selectors in upstream's syntax (`apimachinery/pkg/fields`,
 * `ParseSelector`): comma-separated `field=value`, `field==value` and
 * `field!=value` terms, all of which must hold. In values, `\,` `\=` and `\\`
 * stand for the literal characters. Which field names a resource supports is
 * the caller's check, since it differs per resource.
 */
import { badRequest } from '../http/status-error.js'

export interface FieldRequirement {
  field: string
  /** `==` is read as `=`, as upstream's Requirements() reports it. */
  operator: '=' | '!='
  value: string
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[]
  /** True when the selector does not restrict anything. */
  readonly empty: boolean
  /** A field absent from `fields` counts as the empty string, as upstream's Fields.Get. */
  matches(fields: Record<string, string>): boolean
  toString(): string
}

/** Operators tried at each position in this order, so `a==b` is not read as `a=` `=b`. */
const OPERATORS = ['!=', '==', '='] as const

export function parseFieldSelector(text: string): FieldSelector {
  // Upstream sorts the raw terms, so requirements come out in a stable order.
  const terms = splitTerms(text).sort()
  const requirements: FieldRequirement[] = []
  for (const term of terms) {
    if (term === '') continue
    const split = splitTerm(term)
    if (!split) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`)
    const value = unescapeValue(split.rhs)
    requirements.push({ field: split.lhs, operator: split.op === '!=' ? '!=' : '=', value })
  }
  return new TermSelector(requirements)
}

class TermSelector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0
  }

  matches(fields: Record<string, string>): boolean {
    return this.requirements.every((r) => {
      const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : ''
      return r.operator === '=' ? actual === r.value : actual !== r.value
    })
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(',')
  }
}

/** Splits on commas that are not escaped; escapes stay in the terms for unescapeValue. */
function splitTerms(text: string): string[] {
  if (text === '') return []
  const terms: string[] = []
  let start = 0
  let escaped = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (escaped) escaped = false
    else if (c === '\\') escaped = true
    else if (c === ',') {
      terms.push(text.slice(start, i))
      start = i + 1
    }
  }
  terms.push(text.slice(start))
  return terms
}

/** The first operator occurrence splits the term; field names take no escapes. */
function splitTerm(term: string): { lhs: string; op: string; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) }
    }
  }
  return undefined
}

function unescapeValue(raw: string): string {
  if (!/[\\,=]/.test(raw)) return raw
  let out = ''
  let escaped = false
  for (const c of raw) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`)
      }
      out += c
      escaped = false
    } else if (c === '\\') {
      escaped = true
    } else if (c === ',' || c === '=') {
      // Upstream prints the rune with %v, i.e. as its code point number.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`)
    } else {
      out += c
    }
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\')
  return out
}

function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`)
}
