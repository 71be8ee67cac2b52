/**
 * Label selectors: upstream's string syntax (`apimachinery/pkg/labels`,
 * `Parse`) and the object form of `metav1.LabelSelector`. Errors carry
 * upstream's wording, since kubectl shows them to the user verbatim.
 *
 *   selector    := requirement (',' requirement)*
 *   requirement := ['!'] KEY [ ('in'|'notin') '(' values ')' | ('='|'=='|'!='|'>'|'<') VALUE ]
 */
import { badRequest } from '../http/status-error.js'
import { aggregateText, errorText, type FieldError } from '../validation/field.js'
import { isQualifiedName, isValidLabelValue } from '../validation/names.js'

/** Upstream's selection.Operator values. */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt'

export interface LabelRequirement {
  key: string
  operator: LabelOperator
  /** Sorted and unique, as upstream keeps them; empty for exists and !. */
  values: string[]
}

export interface LabelSelector {
  /** Sorted by key, as upstream does, so equal selectors print alike. */
  readonly requirements: readonly LabelRequirement[]
  /** True when the selector does not restrict anything. */
  readonly empty: boolean
  matches(labels: Record<string, string> | undefined): boolean
  toString(): string
}

/** The object form (`matchLabels`, `matchExpressions`) used in workload specs. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>
}

export function parseLabelSelector(text: string): LabelSelector {
  return new RequirementSelector(new Parser(lex(text)).parse())
}

/**
 * The selector a `metav1.LabelSelector` means: undefined/null selects nothing,
 * an empty one selects everything (upstream's LabelSelectorAsSelector).
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return NOTHING
  const reqs: LabelRequirement[] = []
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    reqs.push(requirement(key, '=', [value]))
  }
  for (const expr of sel.matchExpressions ?? []) {
    const op = EXPRESSION_OPERATORS[expr.operator]
    if (!op) throw badRequest(`${JSON.stringify(expr.operator)} is not a valid label selector operator`)
    reqs.push(requirement(expr.key, op, [...new Set(expr.values ?? [])].sort()))
  }
  return new RequirementSelector(reqs)
}

const EXPRESSION_OPERATORS: Record<string, LabelOperator | undefined> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
}

class RequirementSelector implements LabelSelector {
  readonly requirements: readonly LabelRequirement[]

  constructor(reqs: LabelRequirement[]) {
    // Stable sort by key, as upstream, for a deterministic String().
    this.requirements = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  }

  get empty(): boolean {
    return this.requirements.length === 0
  }

  matches(labels: Record<string, string> | undefined): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels ?? {}))
  }

  toString(): string {
    return this.requirements.map(requirementText).join(',')
  }
}

/** Upstream's labels.Nothing(): what a nil selector object means. */
const NOTHING: LabelSelector = {
  requirements: [],
  empty: false,
  matches: () => false,
  toString: () => '',
}

/** Each long value list as a set, built on first use, so a match costs one lookup, as upstream's sets.String. */
const valueSets = new WeakMap<LabelRequirement, ReadonlySet<string>>()

function hasValue(r: LabelRequirement, value: string): boolean {
  if (r.values.length <= 8) return r.values.includes(value)
  let set = valueSets.get(r)
  if (!set) valueSets.set(r, (set = new Set(r.values)))
  return set.has(value)
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key)
  const value = has ? labels[r.key] : undefined
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && hasValue(r, value)
    case 'notin':
    case '!=':
      return value === undefined || !hasValue(r, value)
    case 'exists':
      return has
    case '!':
      return !has
    case 'gt':
    case 'lt': {
      const actual = value === undefined ? undefined : parseInt64(value)
      const bound = r.values.length === 1 ? parseInt64(r.values[0]!) : undefined
      if (actual === undefined || bound === undefined) return false
      return r.operator === 'gt' ? actual > bound : actual < bound
    }
  }
}

function requirementText(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key
    case '!':
      return `!${r.key}`
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`
    case 'gt':
      return `${r.key}>${r.values.join(',')}`
    case 'lt':
      return `${r.key}<${r.values.join(',')}`
    default:
      return `${r.key}${r.operator}${r.values.join(',')}`
  }
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, in range. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined
  const n = BigInt(s)
  return n < INT64_MIN || n > INT64_MAX ? undefined : n
}

// --- building requirements, with upstream's checks (labels.NewRequirement) -------

/** A field error rendered as upstream renders one whose path is nil. */
function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail }
}

function keyProblem(key: string, field: string): FieldError | undefined {
  const errs = isQualifiedName(key)
  return errs.length ? fieldInvalid(field, key, errs.join('; ')) : undefined
}

function requirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: FieldError[] = []
  const keyErr = keyProblem(key, 'key')
  if (keyErr) errs.push(keyErr)
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(fieldInvalid('values', values, "for 'in', 'notin' operators, values set can't be empty"))
      break
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(fieldInvalid('values', values, 'exact-match compatibility requires one single value'))
      break
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(fieldInvalid('values', values, 'values set must be empty for exists and does not exist'))
      break
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(fieldInvalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"))
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(fieldInvalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        }
      })
      break
  }
  values.forEach((v, i) => {
    const problems = isValidLabelValue(v)
    if (problems.length) errs.push(fieldInvalid(`values[${i}][${key}]`, v, problems.join('; ')))
  })
  if (errs.length) throw badRequest(aggregateText(errs))
  return { key, operator, values }
}

// --- lexer --------------------------------------------------------------------

type TokenKind =
  | 'identifier'
  | 'end'
  | '('
  | ')'
  | ','
  | '!'
  | '='
  | '=='
  | '!='
  | '>'
  | '<'
  | 'in'
  | 'notin'

interface Token {
  kind: TokenKind
  text: string
}

const SYMBOLS = new Set(['=', '!', '(', ')', ',', '>', '<'])
const WHITESPACE = new Set([' ', '\t', '\r', '\n'])

/** Splits the text as upstream's lexer does: symbols (longest match), keywords, identifiers. */
function lex(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const ch = text[i]!
    if (WHITESPACE.has(ch)) {
      i++
    } else if (SYMBOLS.has(ch)) {
      const two = text.slice(i, i + 2)
      const kind = (two === '==' || two === '!=' ? two : ch) as TokenKind
      tokens.push({ kind, text: kind })
      i += kind.length
    } else {
      let j = i
      while (j < text.length && !SYMBOLS.has(text[j]!) && !WHITESPACE.has(text[j]!)) j++
      const word = text.slice(i, j)
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'identifier', text: word })
      i = j
    }
  }
  tokens.push({ kind: 'end', text: '' })
  return tokens
}

// --- parser -------------------------------------------------------------------

/**
 * Where a keyword is read: 'in'/'notin' are operators only after a key; in
 * key and value positions they are plain words (`in in (in)` is legal).
 */
type Context = 'operator' | 'value'

const OPERATOR_TOKENS: Partial<Record<TokenKind, LabelOperator>> = {
  in: 'in',
  notin: 'notin',
  '=': '=',
  '==': '==',
  '!=': '!=',
  '>': 'gt',
  '<': 'lt',
}

class Parser {
  private pos = 0

  constructor(private readonly tokens: Token[]) {}

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = []
    for (;;) {
      const t = this.peek('value')
      if (t.kind === 'end') return reqs
      if (t.kind !== 'identifier' && t.kind !== '!') {
        throw badRequest(`found '${t.text}', expected: !, identifier, or 'end of string'`)
      }
      reqs.push(this.requirementOrFail())
      const after = this.take('value')
      if (after.kind === 'end') return reqs
      if (after.kind !== ',') throw badRequest(`found '${after.text}', expected: ',' or 'end of string'`)
      const next = this.peek('value')
      if (next.kind !== 'identifier' && next.kind !== '!') {
        throw badRequest(`found '${next.text}', expected: identifier after ','`)
      }
    }
  }

  private requirementOrFail(): LabelRequirement {
    try {
      return this.requirement()
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      throw badRequest(`unable to parse requirement: ${message}`)
    }
  }

  private requirement(): LabelRequirement {
    let t = this.take('value')
    const negated = t.kind === '!'
    if (negated) t = this.take('value')
    if (t.kind !== 'identifier') throw badRequest(`found '${t.text}', expected: identifier`)
    const key = t.text
    // Upstream checks the key here with a nil field path, hence "<nil>".
    const keyErr = keyProblem(key, '<nil>')
    if (keyErr) throw badRequest(errorText(keyErr))
    const following = this.peek('value').kind
    if (negated) return requirement(key, '!', [])
    if (following === 'end' || following === ',') return requirement(key, 'exists', [])
    const opToken = this.take('operator')
    const op = OPERATOR_TOKENS[opToken.kind]
    if (!op) throw badRequest(`found '${opToken.text}', expected: in, notin, =, ==, !=, gt, lt`)
    const values = op === 'in' || op === 'notin' ? this.valueSet() : this.exactValue()
    return requirement(key, op, [...values].sort())
  }

  /** `(a,b,...)`; empty entries mean the empty value, as upstream. */
  private valueSet(): Set<string> {
    const open = this.take('value')
    if (open.kind !== '(') throw badRequest(`found '${open.text}' expected: '('`)
    const first = this.peek('value')
    if (first.kind === ')') {
      this.take('value')
      return new Set([''])
    }
    if (first.kind !== 'identifier' && first.kind !== ',') {
      throw badRequest(`found '${first.text}', expected: ',', ')' or identifier`)
    }
    const values = this.valueList()
    // Upstream names the list's first token here, not the offending one.
    if (this.take('value').kind !== ')') throw badRequest(`found '${first.text}', expected: ')'`)
    return values
  }

  private valueList(): Set<string> {
    const values = new Set<string>()
    for (;;) {
      const t = this.take('value')
      if (t.kind === 'identifier') {
        values.add(t.text)
        const next = this.peek('value')
        if (next.kind === ',') continue
        if (next.kind === ')') return values
        throw badRequest(`found '${next.text}', expected: ',' or ')'`)
      }
      if (t.kind !== ',') throw badRequest(`found '${t.text}', expected: ',', or identifier`)
      // A comma with nothing before or after it stands for the empty value.
      const next = this.peek('value').kind
      if (values.size === 0 || next === ')' || next === ',') values.add('')
      if (next === ')') return values
    }
  }

  private exactValue(): Set<string> {
    const t = this.peek('value')
    if (t.kind === 'end' || t.kind === ',') return new Set([''])
    this.take('value')
    if (t.kind === 'identifier') return new Set([t.text])
    throw badRequest(`found '${t.text}', expected: identifier`)
  }

  private peek(ctx: Context): Token {
    return this.read(this.pos, ctx)
  }

  private take(ctx: Context): Token {
    const t = this.read(this.pos, ctx)
    if (this.pos < this.tokens.length - 1) this.pos++
    return t
  }

  private read(at: number, ctx: Context): Token {
    const t = this.tokens[at] ?? { kind: 'end', text: '' }
    return ctx === 'value' && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'identifier', text: t.text } : t
  }
}
