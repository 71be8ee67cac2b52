/**
 * A YAML request body to plain data in bounded work: the depth is measured
 * before anything recursive runs, aliases expand within a budget, the text
 * is parsed once (the value and the duplicate keys come from one document),
 * and duplicate keys are found with a Set per map instead of the yaml
 * package's pairwise comparison, which is quadratic in a map's size.
 */
import { Composer, CST, type Document, isScalar, Lexer, LineCounter, Parser, visit, YAMLError } from 'yaml'
import { duplicateJsonFields } from './duplicate-fields.js'
import { depthMessage, jsonTooDeepAt, MAX_NESTING_DEPTH, nestsDeeperThan } from './limits.js'

/** A body the decoder refuses, in go-yaml's words after `yaml: `. */
export class YamlBodyError extends Error {}

/** Upstream's decoder expands an alias bomb no further than this (go-yaml's "excessive aliasing"). */
const MAX_ALIAS_COUNT = 100

/**
 * A first pass over the lexer's output, which streams and stops at once: flow
 * brackets, and indicators that nest on one line (`- - - x`, `? ? x`), past
 * the limit. It spares the CST parser (about ten times slower per token) a
 * megabyte of `[` before the exact count below.
 */
function lexedTooDeep(text: string, limit: number): boolean {
  let flow = 0
  let onLine = 0
  for (const lexeme of new Lexer().lex(text)) {
    if (lexeme === '[' || lexeme === '{') flow++
    else if (lexeme === ']' || lexeme === '}') flow = Math.max(0, flow - 1)
    else if (lexeme === '-' || lexeme === '?') onLine++
    else if (lexeme === '\n' || lexeme === '\r\n') onLine = 0
    if (flow + onLine > limit) return true
  }
  return false
}

/** Children of a CST token that may be collections themselves (keys too: YAML allows complex keys). */
function childTokens(token: CST.Token): Array<CST.Token | null | undefined> {
  switch (token.type) {
    case 'document':
      return [token.value]
    case 'block-map':
    case 'block-seq':
    case 'flow-collection':
      return token.items.flatMap((item) => [item.key, item.value])
    default:
      return []
  }
}

/** The exact collection depth of parsed CST tokens, walked without recursion. */
function tokensTooDeep(tokens: readonly CST.Token[], limit: number): boolean {
  const stack = tokens.map((token) => ({ token, depth: 0 }))
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!
    const here = CST.isCollection(token) ? depth + 1 : depth
    if (here > limit) return true
    for (const child of childTokens(token)) if (child) stack.push({ token: child, depth: here })
  }
  return false
}

/** True when `text` nests collections more than `limit` levels deep (aliases not followed). */
export function yamlNestsDeeperThan(text: string, limit: number): boolean {
  return lexedTooDeep(text, limit) || tokensTooDeep([...new Parser().parse(text)], limit)
}

function aliasMessage(message: string): string {
  return /excessive alias count/i.test(message) ? 'document contains excessive aliasing' : message
}

function located(err: YAMLError, lines: LineCounter): string {
  const message = aliasMessage(err.message)
  if (err.pos[0] < 0) return message
  return `line ${lines.linePos(err.pos[0]).line}: ${message}`
}

/** Keys a map holds twice, in upstream's words (`line 7: key "a" already set in map`). */
function duplicateKeys(doc: Document, lines: LineCounter): string[] {
  const found: string[] = []
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>()
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue
        const id = `${typeof pair.key.value}:${String(pair.key.value)}`
        if (!seen.has(id)) seen.add(id)
        else found.push(`  line ${lines.linePos(pair.key.range?.[0] ?? 0).line}: key ${JSON.stringify(String(pair.key.value))} already set in map`)
      }
    },
  })
  return found.length ? [`yaml: unmarshal errors:\n${found.join('\n')}`] : []
}

/**
 * JSON is YAML, and what kubectl sends as YAML (server-side apply) is JSON
 * text: V8's parser reads it a hundred times faster than the yaml package.
 * Only a text that parses, nests within the limit and holds no key twice
 * takes this path; anything else goes through the YAML decoder, whose words
 * (line numbers, duplicate keys) the answer then carries.
 */
function jsonFastPath(text: string): { value: unknown } | undefined {
  const first = /\S/.exec(text)?.[0]
  if (first !== '{' && first !== '[') return undefined
  if (jsonTooDeepAt(text) !== undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  return duplicateJsonFields(text).length === 0 ? { value } : undefined
}

/**
 * One YAML document to plain data, with its duplicate keys when asked
 * (`findDuplicates`, for field validation; the value keeps the last one, as
 * upstream's decoder does). Throws YamlBodyError with go-yaml's words.
 */
export function decodeYaml(text: string, findDuplicates: boolean): { value: unknown; duplicates: string[] } {
  const asJson = jsonFastPath(text)
  if (asJson) return { value: asJson.value, duplicates: [] }
  if (lexedTooDeep(text, MAX_NESTING_DEPTH)) throw new YamlBodyError(depthMessage())
  const lines = new LineCounter()
  const tokens = [...new Parser(lines.addNewLine).parse(text)]
  if (tokensTooDeep(tokens, MAX_NESTING_DEPTH)) throw new YamlBodyError(depthMessage())
  const docs = new Composer({ uniqueKeys: false, merge: false }).compose(tokens, true, text.length)
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
  // An alias may place a deep anchor deeper still.
  if (nestsDeeperThan(value)) throw new YamlBodyError(depthMessage())
  return { value, duplicates: findDuplicates ? duplicateKeys(doc, lines) : [] }
}
