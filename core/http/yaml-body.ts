/**
 * A YAML request body to plain data in bounded work: the depth is measured
 * before anything recursive runs, aliases expand within a budget, the text
 * is parsed once (the value and the duplicate keys come from one document),
 * and duplicate keys are found with a Set per map instead of the yaml
 * package's pairwise comparison, which is quadratic in a map's size.
 * Lexing, parsing and composing a large body run in time slices (the yaml
 * package's streaming Lexer and Parser, and yaml-compose.ts), so that other
 * requests are served meanwhile.
 */
import { Composer, CST, Lexer, LineCounter, Parser, YAMLError } from 'yaml'
import { duplicateJsonFields, duplicateJsonFieldsWalk } from './duplicate-fields.js'
import { parseJsonWalk } from '../machinery/json-slices.js'
import { depthMessage, depthWalk, isStackOverflow, jsonTooDeepAt, jsonTooDeepWalk, MAX_NESTING_DEPTH } from '../machinery/limits.js'
import { type Checkpointed, runInSlices, SLICE_BUDGET_MS, TimeSlice } from '../machinery/time-slice.js'
import { COMPOSER_OPTIONS, type Composed, composeInSlices, duplicateKeysUnder } from './yaml-compose.js'
import { simpleYamlWalk } from './yaml-simple.js'

/** A body the decoder refuses, in go-yaml's words after `yaml: `. */
export class YamlBodyError extends Error {}

/**
 * A YAML body whose value JSON cannot carry (`.inf`, `.nan`, a number past
 * float64), in the words of Go's JSON encoder after upstream's converter
 * (`json: unsupported value: +Inf`), which refuses it with 400. Stored as
 * it decodes here, it would become null. (Upstream's YAML parser reads a
 * numeral past float64, `1e400`, as a string instead; here it is refused too.)
 */
export class YamlNotJsonError extends Error {}

/** Texts that can decode to a number JSON cannot carry: `.inf`, `.nan`, an exponent of three digits, 200 digits in a row. */
const MAY_NOT_BE_FINITE = /\.(?:inf|nan)|[eE][+-]?\d{3}|[0-9a-fA-F]{200}/i

/** Upstream's decoder expands an alias bomb no further than this (go-yaml's "excessive aliasing"). */
const MAX_ALIAS_COUNT = 100

/** How much text the lexer is fed at a time: some 0.15 ms of the parser's work, well under a slice. */
const PARSE_CHUNK = 256

interface Lexed {
  /** Flow brackets, or indicators nested on one line, past the limit: nothing parsed past that point. */
  tooDeep: boolean
  anchorsOrAliases: boolean
  /** The CST of the text (of its start only when `tooDeep`). */
  tokens: CST.Token[]
}

/**
 * Lexes `text` once, a chunk at a time, and gives each lexeme both to a
 * first depth check and to the yaml package's parser: lexing allocates
 * hundreds of bytes per character, and its parser would otherwise lex the
 * text a second time. The check counts flow brackets and indicators that
 * nest on one line (`- - - x`, `? ? x`) and stops at once past the limit:
 * it spares the parser (about ten times slower per token) a megabyte of
 * `[` before the exact count on the CST. Offsets and line starts are those
 * of the whole text.
 */
async function lexAndParse(text: string, limit: number, lines: LineCounter, slice: TimeSlice): Promise<Lexed> {
  // The first line starts at 0, as the parser's own parse() reports on its first call.
  lines.addNewLine(0)
  let last = 0
  const parser = new Parser((offset) => {
    if (offset > last) lines.addNewLine(offset)
    last = Math.max(last, offset)
  })
  const lexer = new Lexer()
  const tokens: CST.Token[] = []
  let flow = 0
  let onLine = 0
  let anchorsOrAliases = false
  const take = (lexeme: string): boolean => {
    if (lexeme === '[' || lexeme === '{') flow++
    else if (lexeme === ']' || lexeme === '}') flow = Math.max(0, flow - 1)
    else if (lexeme === '-' || lexeme === '?') onLine++
    else if (lexeme === '\n' || lexeme === '\r\n') onLine = 0
    else if (lexeme[0] === '&' || lexeme[0] === '*') anchorsOrAliases = true
    if (flow + onLine > limit) return false
    for (const token of parser.next(lexeme)) tokens.push(token)
    return true
  }
  // Chunks end after a line break: the lexer reads a run of indentation cut in two as two tokens.
  for (let at = 0; at < text.length; ) {
    const lineEnd = text.indexOf('\n', at + PARSE_CHUNK)
    const end = lineEnd < 0 ? text.length : lineEnd + 1
    for (const lexeme of lexer.lex(text.slice(at, end), true)) if (!take(lexeme)) return { tooDeep: true, anchorsOrAliases, tokens }
    at = end
    await slice.pause()
  }
  for (const lexeme of lexer.lex('', false)) if (!take(lexeme)) return { tooDeep: true, anchorsOrAliases, tokens }
  for (const token of parser.end()) tokens.push(token)
  return { tooDeep: false, anchorsOrAliases, tokens }
}

/** The exact collection depth of parsed CST tokens, walked without recursion (keys too: YAML allows complex keys). */
async function tokensTooDeep(tokens: readonly CST.Token[], limit: number, slice: TimeSlice): Promise<boolean> {
  // Two stacks side by side: no pair per token, nor an array of children per collection.
  const stack: CST.Token[] = [...tokens]
  const depths: number[] = tokens.map(() => 0)
  const push = (token: CST.Token | null | undefined, depth: number): void => {
    if (!token) return
    stack.push(token)
    depths.push(depth)
  }
  for (let seen = 1; stack.length > 0; seen++) {
    const token = stack.pop()!
    const depth = depths.pop()!
    const here = CST.isCollection(token) ? depth + 1 : depth
    if (here > limit) return true
    if (token.type === 'document') push(token.value, here)
    else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      for (const item of token.items) {
        push(item.key, here)
        push(item.value, here)
      }
    }
    if (seen % 1024 === 0) await slice.pause()
  }
  return false
}

/** True when `text` nests collections more than `limit` levels deep (aliases not followed). */
export async function yamlNestsDeeperThan(text: string, limit: number): Promise<boolean> {
  const slice = new TimeSlice()
  const lexed = await lexAndParse(text, limit, new LineCounter(), slice)
  return lexed.tooDeep || tokensTooDeep(lexed.tokens, limit, slice)
}

function aliasMessage(message: string): string {
  return /excessive alias count/i.test(message) ? 'document contains excessive aliasing' : message
}

function located(err: YAMLError, lines: LineCounter): string {
  const message = aliasMessage(err.message)
  if (err.pos[0] < 0) return message
  return `line ${lines.linePos(err.pos[0]).line}: ${message}`
}

/** Below this many characters JSON text is read at once: JSON.parse takes well under a slice. */
const SLICED_JSON_FROM = 64 * 1024

/**
 * JSON is YAML, and what kubectl sends as YAML (server-side apply) is JSON
 * text: V8's parser reads it a hundred times faster than the yaml package.
 * Only a text that parses, nests within the limit and holds no key twice
 * takes this path; anything else goes through the YAML decoder, whose words
 * (line numbers, duplicate keys) the answer then carries.
 */
async function jsonFastPath(text: string, slice: TimeSlice): Promise<{ value: unknown } | undefined> {
  const first = /\S/.exec(text)?.[0]
  if (first !== '{' && first !== '[') return undefined
  if (text.length < SLICED_JSON_FROM) {
    if (jsonTooDeepAt(text) !== undefined) return undefined
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return undefined
    }
    return duplicateJsonFields(text).length === 0 ? { value } : undefined
  }
  // Megabytes of JSON sent as YAML: checked, parsed and scanned in slices, as a JSON body is.
  if ((await runInSlices(jsonTooDeepWalk(text), slice)) !== undefined) return undefined
  const parsed = await runInSlices(parseJsonWalk(text), slice)
  if (!parsed) return undefined
  return (await runInSlices(duplicateJsonFieldsWalk(text), slice)).length === 0 ? parsed : undefined
}

/** The value of a YAML text that is JSON (valid, within the depth limit, no key twice), read in slices as a JSON body. */
export function yamlTextAsJson(text: string): Promise<{ value: unknown } | undefined> {
  return jsonFastPath(text, new TimeSlice())
}

/**
 * One YAML document to plain data, with its duplicate keys when asked
 * (`findDuplicates`, for field validation; the value keeps the last one, as
 * upstream's decoder does). Throws YamlBodyError with go-yaml's words.
 * `budgetMs` is how long it holds the thread before letting others run: a
 * thread of its own (a worker) gives Infinity.
 */
export async function decodeYaml(text: string, findDuplicates: boolean, budgetMs = SLICE_BUDGET_MS): Promise<{ value: unknown; duplicates: string[] }> {
  const slice = new TimeSlice(budgetMs)
  let decoded: { value: unknown; duplicates: string[] }
  try {
    decoded = await decodeYamlIn(slice, text, findDuplicates)
  } catch (err) {
    // The yaml package's parser recurses once per item of a flow map its indentation leaves open (`data: {` then a
    // line of thousands of `k: v` at column 0): the stack it overflows is the body's nesting as that parser reads it.
    if (isStackOverflow(err)) throw new YamlBodyError(depthMessage())
    throw err
  }
  if (MAY_NOT_BE_FINITE.test(text)) {
    const found = await runInSlices(nonFiniteWalk(decoded.value), slice)
    if (found !== undefined) throw new YamlNotJsonError(`json: unsupported value: ${goFloat(found)}`)
  }
  return decoded
}

/** A non-finite number as Go's encoder names it. */
const goFloat = (n: number): string => (Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf')

/** The first number that is not finite, in the order Go's encoder writes a map (keys sorted); undefined when there is none. */
function* nonFiniteWalk(value: unknown): Checkpointed<number | undefined> {
  const pending: unknown[] = [value]
  for (let visited = 1; pending.length > 0; visited++) {
    const node = pending.pop()
    if (typeof node === 'number' && !Number.isFinite(node)) return node
    if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) pending.push(node[i])
    else if (node !== null && typeof node === 'object') {
      const object = node as Record<string, unknown>
      const keys = Object.keys(object).sort()
      for (let i = keys.length - 1; i >= 0; i--) pending.push(object[keys[i]!])
    }
    if ((visited & 1023) === 0) yield
  }
  return undefined
}

async function decodeYamlIn(slice: TimeSlice, text: string, findDuplicates: boolean): Promise<{ value: unknown; duplicates: string[] }> {
  const asJson = await jsonFastPath(text, slice)
  if (asJson) return { value: asJson.value, duplicates: [] }
  const simple = await runInSlices(simpleYamlWalk(text, MAX_NESTING_DEPTH), slice)
  if (simple) return { value: simple.value, duplicates: [] }
  const lines = new LineCounter()
  const lexed = await lexAndParse(text, MAX_NESTING_DEPTH, lines, slice)
  if (lexed.tooDeep) throw new YamlBodyError(depthMessage())
  const { tokens } = lexed
  if (await tokensTooDeep(tokens, MAX_NESTING_DEPTH, slice)) throw new YamlBodyError(depthMessage())
  const composed =
    (await composeInSlices(tokens, lexed.anchorsOrAliases, {
      slice,
      findDuplicates,
      maxAliasCount: MAX_ALIAS_COUNT,
      lineOf: (offset) => lines.linePos(offset).line,
      fail: (err) => {
        throw new YamlBodyError(located(err, lines))
      },
    })) ?? composeWhole(text, tokens, lines, findDuplicates)
  // An alias may place a deep anchor deeper still.
  if (await runInSlices(depthWalk(composed.value), slice)) throw new YamlBodyError(depthMessage())
  return { value: composed.value, duplicates: composed.duplicates.length ? [`yaml: unmarshal errors:\n${composed.duplicates.join('\n')}`] : [] }
}

/** The document composed in one piece: documents with anchors, aliases or directives, and small ones. */
function composeWhole(text: string, tokens: CST.Token[], lines: LineCounter, findDuplicates: boolean): Composed {
  const docs = new Composer(COMPOSER_OPTIONS).compose(tokens, true, text.length)
  const first = docs.next()
  const doc = first.done ? undefined : first.value
  if (!doc) return { value: null, duplicates: [] }
  // One document only, as upstream's YAML serializer reads.
  if (!docs.next().done) throw new YamlBodyError('Source contains multiple documents')
  const problem = doc.errors[0]
  if (problem) throw new YamlBodyError(located(problem, lines))
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (err) {
    // Unresolved or excessive aliases: the document's fault, whatever the package throws.
    throw new YamlBodyError(err instanceof YAMLError ? located(err, lines) : aliasMessage((err as Error).message))
  }
  return { value, duplicates: findDuplicates ? duplicateKeysUnder(doc, (offset) => lines.linePos(offset).line) : [] }
}
