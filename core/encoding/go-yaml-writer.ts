/**
 * JSON data as block YAML, written as checkpointed work: the text the yaml
 * package's `stringify` gives for the options go-yaml.ts sets (upstream's
 * go-yaml v2 layout), built without its document tree. `stringify` builds a
 * node per value and writes the whole at once: one ConfigMap of 40,000 keys
 * held the thread some 200 ms, and a larger custom resource proportionally
 * more. Here keys are sorted in steps, and the text is written a value at a
 * time with a checkpoint every few thousand values.
 *
 * The layout is the package's own (stringifyPair and stringifyCollection in
 * block mode): a map's entries one per line at its indent, a non-empty map
 * under its key on the next line two spaces in, a sequence under its key at
 * the key's own indent (`indentSeq: false`), each item after `- `, empty
 * collections as `{}` and `[]`. What a scalar looks like (plain, quoted,
 * folded, a block) is left to the package's own string writer, given the
 * context its `stringify` would give it, so quoting and folding stay its.
 * test/unit/encoding/go-yaml-writer.test.ts holds the two to the same text.
 */
import { type DocumentOptions, type ScalarTag, type SchemaOptions, stringify, type Tags, type ToStringOptions } from 'yaml'
import { stringifyString, type StringifyContext } from 'yaml/util'
import { sortInSteps } from '../machinery/sort-in-steps.js'
import { type Checkpointed, StepCounter } from '../machinery/time-slice.js'
import { goYamlStyle, writeGoYamlScalarInSteps } from './go-yaml-scalar.js'

/** What `stringify` is given: the document's schema and how to write it. */
export type YamlOptions = DocumentOptions & SchemaOptions & ToStringOptions

interface TestedTag {
  default?: boolean | 'key'
  tag: string
  test?: RegExp
}

const STRING_TAG = 'tag:yaml.org,2002:str'
const MERGE_TAG = 'tag:yaml.org,2002:merge'
const INDENT_STEP = '  '
/** The package's defaults for folding, which go-yaml.ts leaves as they are. */
const LINE_WIDTH = 80
const MIN_CONTENT_WIDTH = 20
/**
 * Strings the package writes plain unless a tag reads them as another type:
 * no indicator, quote, hash, control character or line break, no colon at
 * the end, no space at either end, and no start that could be a document
 * marker (`-`, `.`).
 */
const NAME_LIKE = /^[A-Za-z0-9_/](?:[A-Za-z0-9_./: -]*[A-Za-z0-9_./-])?$/
/** Keys longer than this (as written) make the yaml package write an explicit `? key` entry. */
const LONGEST_IMPLICIT_KEY = 1024

/**
 * The context `stringify` hands a scalar at the top of a document with
 * `options`, taken once from a call of its own: a tag that matches only a
 * marker object keeps the context it is called with.
 */
function baseContext(options: YamlOptions): StringifyContext {
  const marker = {}
  let captured: StringifyContext | undefined
  const capture = {
    identify: (value: unknown) => value === marker,
    tag: 'tag:yaml.org,2002:capture',
    stringify: (_node: unknown, ctx: StringifyContext) => {
      captured ??= ctx
      return ''
    },
  }
  const customTags = options.customTags
  const withCapture = (tags: Tags): Tags => [capture as ScalarTag, ...(typeof customTags === 'function' ? customTags(tags) : [...tags, ...(customTags ?? [])])]
  stringify({ k: marker }, { ...options, customTags: withCapture })
  if (!captured) throw new Error('the yaml package did not stringify the marker')
  // The document the context names is the one the marker's tag was added to; strings are tested against its schema's tags, which the marker's tag does not change.
  return { ...captured, indent: '', implicitKey: false, indentAtStart: undefined, allNullValues: false, inFlow: null, forceBlockIndent: false } as StringifyContext
}

export class GoYamlWriter {
  private readonly base: StringifyContext
  private readonly otherTypes: TestedTag[]

  constructor(
    options: YamlOptions,
    private readonly compareKeys: (a: string, b: string) => number,
  ) {
    this.base = baseContext(options)
    const schema = (this.base.doc as unknown as { schema: { tags: TestedTag[]; compat?: TestedTag[] | null } }).schema
    // The tags plainString asks before writing a string plain: a default tag, not a string's, that would read it.
    // go-yaml's encoder writes `<<` plain: the merge key is no type a value is read as.
    this.otherTypes = [...schema.tags, ...(schema.compat ?? [])].filter((tag) => Boolean(tag.default) && tag.tag !== STRING_TAG && tag.tag !== MERGE_TAG && tag.test !== undefined)
  }

  /** The document `stringify(value, options)` writes, for JSON data (null, booleans, numbers, strings, arrays, plain objects). */
  *document(value: unknown): Checkpointed<string> {
    const counter = new StepCounter()
    const text = yield* this.node(value, '', counter, undefined)
    return `${text}\n`
  }

  /**
   * A value string as go-yaml's emitter writes it (go-yaml-scalar.ts, a
   * long one in steps), but one with a line break that go-yaml writes as a
   * literal block, which is the package's to write; `indentAtStart` is
   * where a map value starts after its key's indent, undefined for a
   * sequence item or an explicit entry's value, which start at `indent`.
   */
  private *valueString(value: string, indent: string, indentAtStart: number | undefined): Checkpointed<string> {
    if (this.writtenAsItIs(value, indent, indentAtStart)) return value
    const style = this.otherTypes.some((tag) => tag.test!.test(value)) ? 'double' : goYamlStyle(value)
    if (!style) return this.string(value, indent, false, indentAtStart)
    const column = indentAtStart === undefined ? indent.length : indent.length - INDENT_STEP.length + indentAtStart
    // A document that is one scalar folds at the emitter's first indent.
    return yield* writeGoYamlScalarInSteps(value, style, column, indent || INDENT_STEP)
  }

  /** A string as the package writes it in this context (its string tag marks the value as a string: `actualString`): keys, and block scalars. */
  private string(value: string, indent: string, implicitKey: boolean, indentAtStart: number | undefined): string {
    if (this.writtenAsItIs(value, indent, indentAtStart)) return value
    const ctx = { ...this.base, actualString: true, indent, implicitKey, indentAtStart } as StringifyContext
    return stringifyString({ value } as Parameters<typeof stringifyString>[0], ctx)
  }

  /**
   * Whether the package would write `value` plain and whole: a name-like
   * string (what most keys and values are) that no tag of the schema reads
   * as another type, and that its folding leaves alone (foldFlowLines: a
   * string longer than a line is folded at its spaces, and moved to a line
   * of its own after a key that ends past the line's first 60 columns).
   * Anything else is the package's to write.
   */
  private writtenAsItIs(value: string, indent: string, indentAtStart: number | undefined): boolean {
    // A colon is plain where a character other than a space follows it (managed fields' `f:name`).
    if (!NAME_LIKE.test(value) || value.includes(': ')) return false
    if (value.length > Math.max(1 + MIN_CONTENT_WIDTH, 1 + LINE_WIDTH - indent.length)) {
      if (value.includes(' ')) return false
      if (indentAtStart !== undefined && indentAtStart > LINE_WIDTH - Math.max(2, MIN_CONTENT_WIDTH)) return false
    }
    return !this.otherTypes.some((tag) => tag.test!.test(value))
  }

  /** A value whose first line the caller places (after a key, or `- `); `indent` is the context's for it, as the package's stringify has it. */
  private *node(value: unknown, indent: string, counter: StepCounter, indentAtStart: number | undefined): Checkpointed<string> {
    if (counter.add()) yield
    if (value === null) return 'null'
    switch (typeof value) {
      case 'string':
        return yield* this.valueString(value, indent, indentAtStart)
      case 'number':
        return numberText(value)
      case 'boolean':
        return value ? 'true' : 'false'
      case 'object':
        return Array.isArray(value) ? yield* this.sequence(value, indent, counter) : yield* this.map(value as Record<string, unknown>, indent, counter)
      default:
        throw new TypeError(`not JSON data: ${typeof value}`)
    }
  }

  /** A sequence's items, each after `- ` on a line of its own at `indent`. */
  private *sequence(items: unknown[], indent: string, counter: StepCounter): Checkpointed<string> {
    if (items.length === 0) return '[]'
    const itemIndent = indent + INDENT_STEP
    const lines: string[] = []
    for (const item of items) lines.push(`- ${yield* this.node(item ?? null, itemIndent, counter, undefined)}`)
    return lines.join(`\n${indent}`)
  }

  /** A map's entries in go-yaml's key order, each on a line of its own at `indent`. */
  private *map(map: Record<string, unknown>, indent: string, counter: StepCounter): Checkpointed<string> {
    const keys = Object.keys(map)
    if (keys.length === 0) return '{}'
    yield* sortInSteps(keys, this.compareKeys)
    const entryIndent = indent + INDENT_STEP
    const lines: string[] = []
    for (const key of keys) {
      // Counted here too: an entry whose value is empty (`f:key: {}`, managed fields' own) writes no node.
      if (counter.add()) yield
      const value = map[key] ?? null
      const keyText = this.string(key, entryIndent, true, undefined)
      lines.push(keyText.length > LONGEST_IMPLICIT_KEY ? yield* this.explicitEntry(keyText, value, indent, counter) : yield* this.entry(keyText, value, indent, counter))
    }
    return lines.join(`\n${indent}`)
  }

  /** `key: value`, the value on the key's line or, a collection with entries, on the lines below. */
  private *entry(keyText: string, value: unknown, indent: string, counter: StepCounter): Checkpointed<string> {
    const head = `${keyText}:`
    const entryIndent = indent + INDENT_STEP
    if (isCollection(value)) {
      if (isEmpty(value)) return `${head} ${Array.isArray(value) ? '[]' : '{}'}`
      // A sequence's `- ` counts as its indentation: it starts at the key's own indent.
      const valueIndent = Array.isArray(value) ? indent : entryIndent
      return `${head}\n${valueIndent}${yield* this.node(value, valueIndent, counter, undefined)}`
    }
    const valueText = yield* this.node(value, entryIndent, counter, head.length + 1)
    return valueText === '' || valueText[0] === '\n' ? head + valueText : `${head} ${valueText}`
  }

  /**
   * An entry whose key is too long to write before a colon, as the package
   * writes it: `? key`, then `: ` and the value on the next line, a
   * collection's first entry or item on that line too.
   */
  private *explicitEntry(keyText: string, value: unknown, indent: string, counter: StepCounter): Checkpointed<string> {
    const valueText = yield* this.node(value, indent + INDENT_STEP, counter, undefined)
    const head = `? ${keyText}\n${indent}:`
    return valueText === '' || valueText[0] === '\n' ? head + valueText : `${head} ${valueText}`
  }
}

function isCollection(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

function isEmpty(value: object): boolean {
  if (Array.isArray(value)) return value.length === 0
  for (const _ in value) return false
  return true
}

/** A JSON number as the package writes it in YAML 1.1: JSON's own text, but negative zero's sign kept (infinities and NaN do not occur in JSON data). */
function numberText(value: number): string {
  return Object.is(value, -0) ? '-0' : JSON.stringify(value)
}
