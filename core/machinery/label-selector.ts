/**
 * Label selectors: upstream's string syntax (`apimachinery/pkg/labels`,
 * `Parse`) and the object form of `metav1.LabelSelector`. Errors carry
 * upstream's wording, since kubectl shows them to the user verbatim.
 *
 *   selector    := requirement (',' requirement)*
 *   requirement := ['!'] KEY [ ('in'|'notin') '(' values ')' | ('='|'=='|'!='|'>'|'<') VALUE ]
 */
import { badRequest } from './status-error.js'
import { type Checkpointed, runAtOnce, runInSlices } from './time-slice.js'
import { aggregateText, errorText, type FieldError, kept } from './field.js'
import { isQualifiedName, isValidLabelValue } from './names.js'
import { LabelMatcher } from './label-match.js'

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
  return runAtOnce(selectorOf(text))
}

/**
 * The same parse, yielding to other requests every slice: a selector in a
 * URL may be a megabyte long (upstream's bound on a request's header bytes).
 */
export function parseLabelSelectorInSlices(text: string): Promise<LabelSelector> {
  return runInSlices(selectorOf(text))
}

function* selectorOf(text: string): Checkpointed<LabelSelector> {
  const tokens = yield* lex(text)
  const requirements = yield* new Parser(tokens).parse()
  const matcher = new LabelMatcher(parseInt64)
  for (let i = 0; i < requirements.length; i++) {
    matcher.add(requirements[i]!)
    if ((i & 1023) === 1023) yield
  }
  return new RequirementSelector(requirements, matcher)
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
  private sorted: readonly LabelRequirement[] | undefined

  /**
   * `reqs` in any order, their values too: matching needs no order, so a
   * long selector is sorted only when printed. `matcher`: the requirements
   * folded already (the parser does it in slices), or built on first use.
   */
  constructor(
    private readonly reqs: LabelRequirement[],
    private matcher?: LabelMatcher,
  ) {}

  /** Stable sort by key, values sorted, as upstream, for a deterministic String(). */
  get requirements(): readonly LabelRequirement[] {
    this.sorted ??= [...this.reqs]
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((r) => (r.values.length > 1 ? { ...r, values: [...r.values].sort() } : r))
    return this.sorted
  }

  get empty(): boolean {
    return this.reqs.length === 0
  }

  matches(labels: Record<string, string> | undefined): boolean {
    if (!this.matcher) {
      this.matcher = new LabelMatcher(parseInt64)
      for (const r of this.reqs) this.matcher.add(r)
    }
    return this.matcher.matches(labels ?? {})
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
  return kept({ type: 'FieldValueInvalid', field, value, detail })
}

function keyProblem(key: string, field: string): FieldError | undefined {
  const errs = isQualifiedName(key)
  return errs.length ? fieldInvalid(field, key, errs.join('; ')) : undefined
}

/**
 * `keyChecked`: the parser has refused a bad key already, with its own
 * wording. `valuesChecked`: the parser found every value valid as it read
 * them; the values may then come unsorted (sorted when asked for, see
 * RequirementSelector), since only an error names them by their sorted index.
 */
function requirement(key: string, operator: LabelOperator, values: string[], keyChecked = false, valuesChecked = false): LabelRequirement {
  if (valuesChecked && operator !== 'gt' && operator !== 'lt' && values.length > 0) {
    if (operator === 'in' || operator === 'notin' || values.length === 1) return { key, operator, values }
  }
  return checkedRequirement(key, operator, values.length > 1 ? [...values].sort() : values, keyChecked)
}

function checkedRequirement(key: string, operator: LabelOperator, values: string[], keyChecked: boolean): LabelRequirement {
  const errs: FieldError[] = []
  const keyErr = keyChecked ? undefined : keyProblem(key, 'key')
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

/** `=` `!` `(` `)` `,` `>` `<`: each ends a word. */
function isSymbol(c: number): boolean {
  return c === 0x3d || c === 0x21 || c === 0x28 || c === 0x29 || c === 0x2c || c === 0x3e || c === 0x3c
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a
}

/**
 * Splits the text as upstream's lexer does: symbols (longest match),
 * keywords, identifiers. One pass over character codes: a selector in a URL
 * may be a megabyte long.
 */
function* lex(text: string): Checkpointed<Token[]> {
  const tokens: Token[] = []
  const n = text.length
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (isSpace(c)) {
      i++
    } else if (isSymbol(c)) {
      const two = (c === 0x3d || c === 0x21) && text.charCodeAt(i + 1) === 0x3d
      const kind = (two ? (c === 0x3d ? '==' : '!=') : text[i]) as TokenKind
      tokens.push({ kind, text: kind })
      i += two ? 2 : 1
    } else {
      let j = i + 1
      while (j < n && !isSymbol(text.charCodeAt(j)) && !isSpace(text.charCodeAt(j))) j++
      const word = text.slice(i, j)
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'identifier', text: word })
      i = j
    }
    if ((tokens.length & 1023) === 0) yield
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
  /** Whether every value of the requirement being read is a valid label value. */
  private valuesValid = true

  constructor(private readonly tokens: Token[]) {}

  *parse(): Checkpointed<LabelRequirement[]> {
    const reqs: LabelRequirement[] = []
    for (;;) {
      const t = this.peek('value')
      if (t.kind === 'end') return reqs
      if (t.kind !== 'identifier' && t.kind !== '!') {
        throw badRequest(`found '${t.text}', expected: !, identifier, or 'end of string'`)
      }
      reqs.push(yield* this.requirementOrFail())
      if ((reqs.length & 31) === 0) yield
      const after = this.take('value')
      if (after.kind === 'end') return reqs
      if (after.kind !== ',') throw badRequest(`found '${after.text}', expected: ',' or 'end of string'`)
      const next = this.peek('value')
      if (next.kind !== 'identifier' && next.kind !== '!') {
        throw badRequest(`found '${next.text}', expected: identifier after ','`)
      }
    }
  }

  private *requirementOrFail(): Checkpointed<LabelRequirement> {
    try {
      // Only a set of values needs checkpoints: other requirements are read without a generator each.
      return this.atValueSet() ? yield* this.setRequirement() : this.requirement()
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      throw badRequest(`unable to parse requirement: ${message}`)
    }
  }

  /** Whether the requirement at the parser's position is `key in (...)` or `key notin (...)`. */
  private atValueSet(): boolean {
    const key = this.tokens[this.pos]
    if (key?.kind !== 'identifier' && key?.kind !== 'in' && key?.kind !== 'notin') return false
    const op = this.tokens[this.pos + 1]?.kind
    return op === 'in' || op === 'notin'
  }

  /** `key in (...)` or `key notin (...)`, whose values may be tens of thousands. */
  private *setRequirement(): Checkpointed<LabelRequirement> {
    const key = this.take('value').text
    const keyErr = keyProblem(key, '<nil>')
    if (keyErr) throw badRequest(errorText(keyErr))
    const op = OPERATOR_TOKENS[this.take('operator').kind]!
    this.valuesValid = true
    const values = yield* this.valueSet()
    return requirement(key, op, [...values], true, this.valuesValid)
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
    if (negated) return requirement(key, '!', [], true)
    if (following === 'end' || following === ',') return requirement(key, 'exists', [], true)
    const opToken = this.take('operator')
    const op = OPERATOR_TOKENS[opToken.kind]
    if (!op) throw badRequest(`found '${opToken.text}', expected: in, notin, =, ==, !=, gt, lt`)
    // Sets are read by setRequirement; an `in` here is followed by something else than its list.
    if (op === 'in' || op === 'notin') throw badRequest('a set of values out of place')
    return requirement(key, op, this.exactValue(), true)
  }

  /** `(a,b,...)`; empty entries mean the empty value, as upstream. */
  private *valueSet(): Checkpointed<Set<string>> {
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
    const values = yield* this.valueList()
    // Upstream names the list's first token here, not the offending one.
    if (this.take('value').kind !== ')') throw badRequest(`found '${first.text}', expected: ')'`)
    return values
  }

  private *valueList(): Checkpointed<Set<string>> {
    const values = new Set<string>()
    for (let read = 1; ; read++) {
      if ((read & 255) === 0) yield
      const t = this.take('value')
      if (t.kind === 'identifier') {
        values.add(t.text)
        if (isValidLabelValue(t.text).length > 0) this.valuesValid = false
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

  private exactValue(): string[] {
    const t = this.peek('value')
    if (t.kind === 'end' || t.kind === ',') return ['']
    this.take('value')
    if (t.kind === 'identifier') return [t.text]
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
