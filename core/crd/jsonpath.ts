/**
 * The JSONPath templates of client-go's `util/jsonpath`, which upstream uses
 * for a CRD's printer columns and selectable fields (and kubectl for
 * `-o jsonpath`): `{.spec.replicas}`, `{.items[0].name}`, `{.items[*].name}`,
 * `{.status.conditions[?(@.type=="Ready")].status}`, `{['a']}`, `{..name}`,
 * unions and slices. Parsed once; evaluated on decoded JSON the way the Go
 * evaluator walks unstructured content (integers as int64, other numbers as
 * float64). Error texts are upstream's. `range`/`end` loops are not supported.
 */
import { type FieldError, type FieldPath, invalid } from '../machinery/field.js'
import { goPrint, goTypeOf } from '../machinery/go-format.js'
import { appendAll } from '../machinery/append-all.js'

interface SliceParam {
  known: boolean
  value: number
  /** The end of `[i]`, taken as i+1. */
  derived: boolean
}

interface ListNode {
  type: 'list'
  nodes: Node[]
}

type Node =
  | ListNode
  | { type: 'text'; text: string }
  | { type: 'field'; name: string }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'array'; params: readonly [SliceParam, SliceParam, SliceParam] }
  | { type: 'union'; lists: ListNode[] }
  | { type: 'filter'; left: ListNode; right: ListNode; operator: string }
  | { type: 'int' | 'float'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'identifier'; name: string }

/** An evaluation failure (an index out of bounds, a missing key when those are not allowed ...). */
export class JsonPathError extends Error {
  override readonly name = 'JsonPathError'
}

/**
 * An error whose words are made only when read: upstream's filter error
 * prints the whole value it could not filter, which a printer column then
 * drops (a map of 50,000 fields printed per column and row).
 */
class NotFilterable extends JsonPathError {
  constructor(private readonly value: unknown) {
    super()
  }

  override get message(): string {
    return `${goPrint(this.value)} is not array or slice and cannot be filtered`
  }
}

export interface JsonPathOptions {
  /** A missing field gives no result instead of an error (upstream's AllowMissingKeys). */
  allowMissingKeys?: boolean
}

export interface JsonPath {
  /**
   * The results of each part of the template (each `{...}`, and the text
   * between them), as upstream's FindResults. Throws JsonPathError.
   */
  find(data: unknown, budget?: JsonPathBudget): unknown[][]
}

/**
 * What evaluations have spent of MAX_JSONPATH_VALUES. Each find starts one
 * of its own unless given one: a table row's columns share theirs, so that
 * a definition of hundreds of columns costs a row no more than one column.
 */
export interface JsonPathBudget {
  spent: number
}

const EOF = ''

const list = (): ListNode => ({ type: 'list', nodes: [] })

const isSpace = (r: string): boolean => r === ' ' || r === '\t'
const isEndOfLine = (r: string): boolean => r === '\r' || r === '\n'
const isAlphaNumeric = (r: string): boolean => r === '_' || /^[\p{L}\p{Nd}]$/u.test(r)
const isDigit = (r: string): boolean => /^\p{Nd}$/u.test(r)

/** Where a field name or identifier ends. */
function isTerminator(r: string): boolean {
  return r === EOF || isSpace(r) || isEndOfLine(r) || '.,[]$@{}'.includes(r)
}

/** Go's `%#U`: `U+0023 '#'`, the character shown when printable. */
function goRune(r: string): string {
  const code = r.codePointAt(0) ?? 0
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(r) ? `${hex} '${r}'` : hex
}

const DICT_KEY = /^'([^']*)'$/
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/

/** A recursive-descent reader of one template, as upstream's parser reads it. */
class Parser {
  readonly root = list()
  private pos = 0
  private start = 0
  private width = 0

  constructor(private readonly input: string) {}

  parse(): void {
    this.parseText(this.root)
  }

  private next(): string {
    if (this.pos >= this.input.length) {
      this.width = 0
      return EOF
    }
    const r = String.fromCodePoint(this.input.codePointAt(this.pos) ?? 0)
    this.width = r.length
    this.pos += r.length
    return r
  }

  private peek(): string {
    const r = this.next()
    this.backup()
    return r
  }

  private backup(): void {
    this.pos -= this.width
  }

  private consumeText(): string {
    const text = this.input.slice(this.start, this.pos)
    this.start = this.pos
    return text
  }

  private rest(): string {
    return this.input.slice(this.pos)
  }

  private parseText(cur: ListNode): void {
    for (;;) {
      if (this.rest().startsWith('{')) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() })
        this.pos += 1
        this.consumeText()
        const action = list()
        cur.nodes.push(action)
        this.parseInsideAction(action)
        return
      }
      if (this.next() === EOF) break
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() })
  }

  private parseInsideAction(cur: ListNode): void {
    const rest = this.rest()
    if (rest.startsWith('}')) {
      this.pos += 1
      this.consumeText()
      this.parseText(this.root)
      return
    }
    if (rest.startsWith('[?(')) return this.parseFilter(cur)
    if (rest.startsWith('..')) return this.parseRecursive(cur)
    const r = this.next()
    if (r === EOF || isEndOfLine(r)) throw new JsonPathError('unclosed action')
    if (r === ' ' || r === '@' || r === '$') {
      // Spaces, and the current object's marks, stand for nothing.
      this.consumeText()
      return this.parseInsideAction(cur)
    }
    if (r === '[') return this.parseArray(cur)
    if (r === '"' || r === "'") return this.parseQuote(cur, r)
    if (r === '.') return this.parseField(cur)
    if (r === '+' || r === '-' || isDigit(r)) {
      this.backup()
      return this.parseNumber(cur)
    }
    if (isAlphaNumeric(r)) {
      this.backup()
      return this.parseIdentifier(cur)
    }
    throw new JsonPathError(`unrecognized character in action: ${goRune(r)}`)
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.next()));
    this.backup()
    const value = this.consumeText()
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'bool', value: value === 'true' })
    else cur.nodes.push({ type: 'identifier', name: value })
    this.parseInsideAction(cur)
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === 'recursive') throw new JsonPathError('invalid multiple recursive descent')
    this.pos += 2
    this.consumeText()
    cur.nodes.push({ type: 'recursive' })
    if (isAlphaNumeric(this.peek())) return this.parseField(cur)
    this.parseInsideAction(cur)
  }

  private parseNumber(cur: ListNode): void {
    const sign = this.peek()
    if (sign === '+' || sign === '-') this.next()
    for (;;) {
      const r = this.next()
      if (r !== '.' && !isDigit(r)) {
        this.backup()
        break
      }
    }
    const text = this.consumeText()
    if (/^[+-]?\d+$/.test(text)) cur.nodes.push({ type: 'int', value: Number(text) })
    else if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(text)) cur.nodes.push({ type: 'float', value: Number(text) })
    else throw new JsonPathError(`cannot parse number ${text}`)
    this.parseInsideAction(cur)
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next()
      if (r === EOF || r === '\n') throw new JsonPathError('unterminated array')
      if (r === ']') break
    }
    let text = this.consumeText().slice(1, -1)
    if (text === '*') text = ':'

    const parts = text.split(',')
    if (parts.length > 1) {
      const lists = parts.map((part) => parseAction(`[${part.replace(/^ +| +$/g, '')}]`))
      cur.nodes.push({ type: 'union', lists })
      return this.parseInsideAction(cur)
    }

    // ['key'] reads as .key (so ['a.b'] is .a.b, as upstream reads it).
    const key = DICT_KEY.exec(text)
    if (key) {
      appendAll(cur.nodes, parseAction(`.${key[1] ?? ''}`).nodes)
      return this.parseInsideAction(cur)
    }

    const slice = SLICE.exec(text)
    if (!slice) throw new JsonPathError(`invalid array index ${text}`)
    const params: SliceParam[] = []
    for (let i = 0; i < 3; i++) {
      let raw = slice[i + 1] ?? ''
      if (raw !== '') {
        if (i > 0) raw = raw.slice(1)
        if (i > 0 && raw === '') params.push({ known: false, value: 0, derived: false })
        else params.push({ known: true, value: Number(raw), derived: false })
      } else if (i === 1) {
        params.push({ known: true, value: (params[0]?.value ?? 0) + 1, derived: true })
      } else {
        params.push({ known: false, value: 0, derived: false })
      }
    }
    cur.nodes.push({ type: 'array', params: params as unknown as readonly [SliceParam, SliceParam, SliceParam] })
    this.parseInsideAction(cur)
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3
    this.consumeText()
    let begin = false
    let end = false
    let pair = ''
    for (;;) {
      const r = this.next()
      if (r === EOF || r === '\n') throw new JsonPathError('unterminated filter')
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true
          pair = r
          continue
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true
      } else if (r === ')' && begin === end) {
        break
      }
    }
    if (this.next() !== ']') throw new JsonPathError('unclosed array expect ]')
    const text = this.consumeText().slice(0, -2)
    const parts = FILTER.exec(text)
    if (!parts) {
      cur.nodes.push({ type: 'filter', left: parseAction(text), right: list(), operator: 'exists' })
    } else {
      const left = parseAction(parts[1] ?? '')
      const right = parseAction(parts[3] ?? '')
      cur.nodes.push({ type: 'filter', left, right, operator: parts[2] ?? '' })
    }
    this.parseInsideAction(cur)
  }

  private parseQuote(cur: ListNode, quote: string): void {
    for (;;) {
      const r = this.next()
      if (r === EOF || r === '\n') throw new JsonPathError('unterminated quoted string')
      if (r === quote && this.input[this.pos - 2] !== '\\') break
    }
    const raw = this.consumeText()
    const text = unquote(raw)
    if (text === undefined) throw new JsonPathError(`unquote string ${raw} error invalid syntax`)
    cur.nodes.push({ type: 'text', text })
    this.parseInsideAction(cur)
  }

  private parseField(cur: ListNode): void {
    this.consumeText()
    for (;;) {
      const r = this.next()
      if (r === '\\') this.next()
      else if (isTerminator(r)) {
        this.backup()
        break
      }
    }
    const name = this.consumeText()
    cur.nodes.push(name === '*' ? { type: 'wildcard' } : { type: 'field', name: name.replaceAll('\\', '') })
    this.parseInsideAction(cur)
  }
}

/** A piece of a template read as one action (`{...}`), for unions, dict keys and filter sides. */
function parseAction(text: string): ListNode {
  const parser = new Parser(`{${text}}`)
  parser.parse()
  const first = parser.root.nodes[0]
  return first?.type === 'list' ? first : list()
}

const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' }

/** Go's strconv.Unquote, single quotes allowed as well; undefined for bad syntax. */
function unquote(raw: string): string | undefined {
  const quote = raw[0]
  if (raw.length < 2 || (quote !== '"' && quote !== "'") || raw.at(-1) !== quote) return undefined
  const body = raw.slice(1, -1)
  let out = ''
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string
    if (c === quote) return undefined
    if (c !== '\\') {
      out += c
      continue
    }
    const e = body[++i]
    if (e === undefined) return undefined
    if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e]
    else if (e === quote) out += e
    else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8
      const hex = body.slice(i + 1, i + 1 + len)
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) return undefined
      const code = parseInt(hex, 16)
      if (code > 0x10ffff) return undefined
      out += String.fromCodePoint(code)
      i += len
    } else if (/[0-7]/.test(e)) {
      const oct = body.slice(i, i + 3)
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return undefined
      out += String.fromCharCode(parseInt(oct, 8))
      i += 2
    } else return undefined
  }
  return out
}

// --- evaluation ------------------------------------------------------------

type Kind = 'bool' | 'int' | 'float' | 'string'

/** The comparable kind of a value, as Go's template comparisons classify it. */
function basicKind(v: unknown): Kind {
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float'
  if (typeof v === 'string') return 'string'
  throw new JsonPathError('invalid type for comparison')
}

function equal(a: unknown, b: unknown): boolean {
  if (basicKind(a) !== basicKind(b)) throw new JsonPathError('incompatible types for comparison')
  return a === b
}

function less(a: unknown, b: unknown): boolean {
  const kind = basicKind(a)
  if (kind !== basicKind(b)) throw new JsonPathError('incompatible types for comparison')
  if (kind === 'bool') throw new JsonPathError('invalid type for comparison')
  return (a as number | string) < (b as number | string)
}

const COMPARE: Record<string, (a: unknown, b: unknown) => boolean> = {
  '<': less,
  '>': (a, b) => !(less(a, b) || equal(a, b)),
  '==': equal,
  '!=': (a, b) => !equal(a, b),
  '<=': (a, b) => less(a, b) || equal(a, b),
  '>=': (a, b) => !less(a, b),
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * How many values one evaluation (or a table row's columns together) may step through. Upstream evaluates
 * without a bound; here the server has one thread, and `..` repeated over a
 * large object (each `..` lists every subtree again, strings as their
 * bytes) grows by the object's depth at each repetition. Real columns touch
 * a handful of values; past the bound the evaluation fails, and a printer
 * column shows an empty cell, as upstream shows one for a path that fails.
 * Bounding each column alone would let a definition of hundreds of columns
 * hold the thread for seconds on every row it prints.
 */
export const MAX_JSONPATH_VALUES = 200_000

const utf8 = new TextEncoder()

class JsonPathBudgetError extends JsonPathError {}

class Evaluator {
  private budget: JsonPathBudget = { spent: 0 }

  constructor(private readonly allowMissingKeys: boolean) {}

  /** The budget the evaluation about to run charges. */
  chargeTo(budget: JsonPathBudget): void {
    this.budget = budget
  }

  private charge(values: number): void {
    this.budget.spent += values
    if (this.budget.spent > MAX_JSONPATH_VALUES) throw new JsonPathBudgetError(`evaluation steps through more than ${MAX_JSONPATH_VALUES} values`)
  }

  /** What `*` and `..` step into: a map's values, an array's items, a string's bytes; charged before they are made. */
  private children(v: unknown): unknown[] {
    if (Array.isArray(v)) {
      this.charge(v.length)
      return v
    }
    if (isMap(v)) {
      const values = Object.values(v)
      this.charge(values.length)
      return values
    }
    if (typeof v === 'string') {
      this.charge(v.length)
      return [...utf8.encode(v)]
    }
    return []
  }

  /** `..`: every value that has something inside, followed by everything under it. */
  private recursive(input: unknown[]): unknown[] {
    const out: unknown[] = []
    for (const v of input) {
      if (v === null) continue
      const inner = this.children(v)
      if (!inner.length) continue
      out.push(v)
      for (const below of this.recursive(inner)) out.push(below)
    }
    this.charge(out.length)
    return out
  }

  /**
   * Every node that yields values charges them, so the budget bounds any
   * path: a union or a literal repeats what came in, and unions of names
   * repeated in a row multiply it without stepping into anything.
   */
  walk(input: unknown[], node: Node): unknown[] {
    switch (node.type) {
      case 'list':
        return node.nodes.reduce((values, n) => this.walk(values, n), input)
      case 'text':
        this.charge(1)
        return [node.text]
      case 'field':
        return this.field(input, node.name)
      case 'array':
        return input.flatMap((v) => {
          if (v === null) return []
          const items = slice(v, node.params)
          this.charge(items.length)
          return items
        })
      case 'filter':
        return this.filter(input, node)
      case 'int':
      case 'float':
      case 'bool':
        this.charge(input.length)
        return input.map(() => node.value)
      case 'wildcard':
        return input.flatMap((v) => this.children(v))
      case 'recursive':
        return this.recursive(input)
      case 'union':
        return this.union(input, node.lists)
      case 'identifier':
        if (node.name === 'range' || node.name === 'end') throw new JsonPathError(`${node.name} is not supported here`)
        throw new JsonPathError(`unrecognized identifier ${node.name}`)
    }
  }

  private field(input: unknown[], name: string): unknown[] {
    const results: unknown[] = []
    for (const v of input) if (isMap(v) && Object.hasOwn(v, name)) results.push(v[name])
    this.charge(results.length)
    if (!results.length && input.length && !this.allowMissingKeys) throw new JsonPathError(`${name} is not found`)
    return results
  }

  /** Each list's results, charged before they are appended: an empty list gives back its input uncharged. */
  private union(input: unknown[], lists: readonly ListNode[]): unknown[] {
    const out: unknown[] = []
    for (const l of lists) {
      const values = this.walk(input, l)
      this.charge(values.length)
      for (const v of values) out.push(v)
    }
    return out
  }

  private filter(input: unknown[], node: Extract<Node, { type: 'filter' }>): unknown[] {
    const results: unknown[] = []
    for (const value of input) {
      if (!Array.isArray(value)) throw new NotFilterable(value)
      this.charge(value.length)
      for (const item of value) {
        if (node.operator === 'exists') {
          let lefts: unknown[] = []
          try {
            lefts = this.walk([item], node.left)
          } catch (err) {
            // A side that cannot be evaluated does not exist; a spent budget ends the whole evaluation.
            if (err instanceof JsonPathBudgetError) throw err
          }
          if (lefts.length) results.push(item)
          continue
        }
        const lefts = this.walk([item], node.left)
        if (!lefts.length) continue
        if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time')
        const rights = this.walk([item], node.right)
        if (!rights.length) continue
        if (rights.length > 1) throw new JsonPathError('can only compare one element at a time')
        const compare = COMPARE[node.operator]
        if (!compare) throw new JsonPathError(`unrecognized filter operator ${node.operator}`)
        if (compare(lefts[0], rights[0])) results.push(item)
      }
    }
    return results
  }
}

function slice(value: unknown, params: readonly [SliceParam, SliceParam, SliceParam]): unknown[] {
  if (!Array.isArray(value)) throw new JsonPathError(`${goTypeOf(value)} is not array or slice`)
  const length = value.length
  let from = params[0].known ? params[0].value : 0
  if (from < 0) from += length
  let to = params[1].known ? params[1].value : length
  if (to < 0 || (to === 0 && params[1].derived)) to += length
  if (to === from) return []
  if (from >= length || from < 0) throw new JsonPathError(`array index out of bounds: index ${from}, length ${length}`)
  if (to > length || to < 0) throw new JsonPathError(`array index out of bounds: index ${to - 1}, length ${length}`)
  if (from > to) throw new JsonPathError(`starting index ${from} is greater than ending index ${to}`)
  let step = 1
  if (params[2].known) {
    if (params[2].value <= 0) throw new JsonPathError('step must be > 0')
    step = params[2].value
  }
  const out: unknown[] = []
  for (let i = from; i < to; i += step) out.push(value[i])
  return out
}

/**
 * Reads a template once. A text without `{` is one expression
 * (`.spec.replicas` as `{.spec.replicas}`). Returns upstream's parse error
 * text when it is not a template.
 */
export function compileJsonPath(text: string, options: JsonPathOptions = {}): JsonPath | string {
  const parser = new Parser(text.includes('{') ? text : `{${text}}`)
  try {
    parser.parse()
  } catch (err) {
    if (err instanceof JsonPathError) return err.message
    throw err
  }
  const evaluator = new Evaluator(options.allowMissingKeys ?? false)
  const nodes = parser.root.nodes
  return {
    find: (data, budget = { spent: 0 }) => {
      evaluator.chargeTo(budget)
      return nodes.map((node) => evaluator.walk([data], node))
    },
  }
}

/** The parse error of a template, or undefined when it reads. */
export function jsonPathSyntaxError(text: string): string | undefined {
  const compiled = compileJsonPath(text)
  return typeof compiled === 'string' ? compiled : undefined
}

/**
 * upstream's validateSimpleJSONPath, the check a CRD's printer columns,
 * selectable fields and scale paths get: not empty, starting with a dot.
 */
export function validateSimpleJsonPath(path: string, fld: FieldPath): FieldError[] {
  if (path === '') return [invalid(fld, path, 'must not be empty')]
  if (!path.startsWith('.')) return [invalid(fld, path, 'must be a simple json path starting with .')]
  return []
}
