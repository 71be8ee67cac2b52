/**
 * Field selectors in upstream's syntax (`apimachinery/pkg/fields`,
 * `ParseSelector`): comma-separated `field=value`, `field==value` and
 * `field!=value` terms, all of which must hold. In values, `\,` `\=` and `\\`
 * stand for the literal characters. Which field names a resource supports is
 * the caller's check, since it differs per resource.
 */
import { badRequest } from './status-error.js'
import { type Checkpointed, runAtOnce, runInSlices } from './time-slice.js'

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
  /** The fields the terms name, each once, in no particular order. */
  readonly fields: Iterable<string>
  /** The value a `field=value` term demands, when the selector has one (and no conflicting one); no sorting. */
  requiredValue(field: string): string | undefined
  /** A field absent from `fields` counts as the empty string, as upstream's Fields.Get. */
  matches(fields: Record<string, string>): boolean
  toString(): string
}

/** Operators tried at each position in this order, so `a==b` is not read as `a=` `=b`. */
const OPERATORS = ['!=', '==', '='] as const

export function parseFieldSelector(text: string): FieldSelector {
  return runAtOnce(selectorOf(text))
}

/**
 * The same parse, yielding to other requests every slice: a selector in a
 * URL may be a megabyte long (upstream's bound on a request's header bytes).
 */
/** The selector of one object by name (`metadata.name=<name>`, escaped as upstream's OneTermEqualSelector writes it). */
export function nameSelector(name: string): FieldSelector {
  return parseFieldSelector(`metadata.name=${escapeValue(name)}`)
}

export function parseFieldSelectorInSlices(text: string): Promise<FieldSelector> {
  return runInSlices(selectorOf(text))
}

/**
 * Upstream sorts the raw terms and stops at the first it cannot read. The
 * terms are read here in text order and sorted only when printed; of the
 * bad ones, the smallest is the one upstream would have met first.
 */
function* selectorOf(text: string): Checkpointed<FieldSelector> {
  const terms = splitTerms(text)
  const requirements: Array<{ term: string; requirement: FieldRequirement }> = []
  let firstBad: { term: string; error: unknown } | undefined
  for (let i = 0; i < terms.length; i++) {
    if ((i & 511) === 511) yield
    const term = terms[i]!
    if (term === '' || (firstBad && term >= firstBad.term)) continue
    try {
      requirements.push({ term, requirement: termRequirement(text, term) })
    } catch (error) {
      firstBad = { term, error }
    }
  }
  if (firstBad) throw firstBad.error
  return new TermSelector(requirements)
}

function termRequirement(text: string, term: string): FieldRequirement {
  const split = splitTerm(term)
  if (!split) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`)
  const value = unescapeValue(split.rhs)
  return { field: split.lhs, operator: split.op === '!=' ? '!=' : '=', value }
}

/** What the terms on one field demand together: one value (or none possible), and values it must not have. */
interface FieldRule {
  equal?: string
  /** Two different `=` values: nothing matches. */
  impossible: boolean
  notEqual: Set<string>
}

class TermSelector implements FieldSelector {
  private sorted: readonly FieldRequirement[] | undefined
  /** Per field, so a match costs a lookup per field named, however many terms name it. */
  private readonly rules = new Map<string, FieldRule>()

  constructor(private readonly terms: ReadonlyArray<{ term: string; requirement: FieldRequirement }>) {
    for (const { requirement: r } of terms) {
      let rule = this.rules.get(r.field)
      if (!rule) this.rules.set(r.field, (rule = { impossible: false, notEqual: new Set() }))
      if (r.operator === '!=') rule.notEqual.add(r.value)
      else if (rule.equal === undefined) rule.equal = r.value
      else if (rule.equal !== r.value) rule.impossible = true
    }
  }

  /** In the order of their sorted terms, as upstream lists them. */
  get requirements(): readonly FieldRequirement[] {
    this.sorted ??= [...this.terms].sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0)).map((t) => t.requirement)
    return this.sorted
  }

  get empty(): boolean {
    return this.terms.length === 0
  }

  get fields(): Iterable<string> {
    return this.rules.keys()
  }

  requiredValue(field: string): string | undefined {
    const rule = this.rules.get(field)
    return rule && !rule.impossible ? rule.equal : undefined
  }

  matches(fields: Record<string, string>): boolean {
    for (const [field, rule] of this.rules) {
      const actual = Object.hasOwn(fields, field) ? fields[field]! : ''
      if (rule.impossible || (rule.equal !== undefined && actual !== rule.equal) || rule.notEqual.has(actual)) return false
    }
    return true
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

/**
 * The value a `field=value` (or `==`) term of `text` demands, as upstream's
 * RequiresExactMatch reads the parsed selector: of such terms, the first in
 * the sorted order of the terms' text, its value unescaped. Undefined when
 * there is none, or when that term's value does not unescape (the selector
 * does not parse then). The other terms are only split, not read: this runs
 * on a request's whole query before its handler parses the selector in
 * slices, and whatever is wrong with them is that parse's to refuse.
 */
export function requiredValueInText(text: string, field: string): string | undefined {
  if (!text.includes(field)) return undefined
  const head = `${field}=`
  let first: string | undefined
  for (const term of text.includes('\\') ? splitTerms(text) : text.split(',')) {
    // A field name holds no operator, so the term's first one follows the name.
    if (term.startsWith(head) && (first === undefined || term < first)) first = term
  }
  if (first === undefined) return undefined
  const rhs = first.slice(head.length)
  try {
    return unescapeValue(rhs.startsWith('=') ? rhs.slice(1) : rhs)
  } catch {
    return undefined
  }
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
