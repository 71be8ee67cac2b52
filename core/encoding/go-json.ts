/**
 * JSON text as Go's encoding/json writes it, which is what upstream's
 * serializers answer with and what clients compare byte for byte: struct
 * fields in declaration order, map keys sorted, `<`, `>`, `&`, U+2028 and
 * U+2029 escaped, and (from json.Encoder) a newline after every value.
 *
 * What order applies where is a Shape (see json-shapes.ts); this module only
 * writes values along one.
 */
import { jsonStringEnd } from '../machinery/json-strings.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

/** How a value is written. */
export type Shape =
  /** A Go struct: known fields in declaration order. */
  | StructShape
  | { readonly kind: 'array'; readonly item: Shape }
  /** A Go map: keys sorted. */
  | { readonly kind: 'map'; readonly value: Shape }
  /** Scalars and raw JSON (RawExtension, JSON): written as they are. */
  | { readonly kind: 'verbatim' }
  /** map[string]interface{} all the way down (unstructured objects): every key sorted. */
  | { readonly kind: 'unstructured' }
  /** An embedded API object (a Table row's object): shaped by its own apiVersion and kind. */
  | { readonly kind: 'object' }

export interface StructShape {
  readonly kind: 'struct'
  /** Filled once, after the shape is in its cache, so recursive types can refer to themselves. */
  fields: readonly FieldShape[]
  /** Field name -> its position in `fields`. */
  index: ReadonlyMap<string, number>
  /** The positions of the fields Go writes even when unset (those with `whenUnset`), ascending. */
  unset: readonly number[]
}

export interface FieldShape {
  readonly name: string
  /** `"name":`, escaped once. */
  readonly key: string
  readonly shape: Shape
  /** Left out when "", 0, false, null or an empty list, wherever the value is written (TypeMeta, Status, ListMeta). */
  readonly omitEmpty: boolean
  /**
   * Go's `omitempty` on a non-pointer field: "", 0, false, null and empty
   * lists and maps are left out of what upstream serves and stores (not of
   * a store's canonical copy, which keeps what it was given).
   */
  readonly goOmitEmpty?: true
  /**
   * What Go writes for the field when the object does not hold it (absent
   * or null): JSON text (`null`, `""`, `0`), or `struct` for its struct
   * shape's empty form (`{}` with that struct's own such fields). Fields
   * without it are left out when unset, as a nil pointer with `omitempty`.
   */
  readonly whenUnset?: string
}

/** `whenUnset` of a struct field: the struct's empty form. */
export const EMPTY_STRUCT = 'struct'

const NONE: readonly number[] = []

export const VERBATIM: Shape = { kind: 'verbatim' }
export const UNSTRUCTURED: Shape = { kind: 'unstructured' }

/** Finds the shape of an embedded API object (`object` shapes); set by the module that knows the kinds. */
export type ObjectShapeOf = (value: Record<string, unknown>) => Shape

/**
 * Orders strings as Go compares them, byte-wise in UTF-8. JavaScript's `<`
 * compares UTF-16 code units, which disagrees only where a surrogate pair
 * meets a character from U+E000 up; those are moved into UTF-8's order.
 */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 0xd800 && y < 0xd800) return x - y
    return utf8Rank(x) - utf8Rank(y)
  }
  return a.length - b.length
}

function utf8Rank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000
  if (unit >= 0xe000) return unit - 0x800
  return unit
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `v`'s keys in the order Go writes a map's. */
export function sortedKeys(v: Record<string, unknown>): string[] {
  const keys = Object.keys(v)
  return keys.length > 1 ? keys.sort(compareGoStrings) : keys
}

function writeUnstructured(v: unknown): string {
  if (Array.isArray(v)) {
    let out = '['
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + writeUnstructured(v[i] ?? null)
    return `${out}]`
  }
  if (!isRecord(v)) return JSON.stringify(v) ?? 'null'
  let out = '{'
  let first = true
  for (const k of sortedKeys(v)) {
    const item = v[k]
    if (item === undefined) continue
    out += `${first ? '' : ','}${JSON.stringify(k)}:${writeUnstructured(item)}`
    first = false
  }
  return `${out}}`
}

/** Go's empty values for `omitempty`: "", 0, false, nil, and slices and maps of no elements. */
export function isEmptyValue(v: unknown): boolean {
  if (v === '' || v === 0 || v === false || v === null) return true
  if (typeof v !== 'object') return false
  if (Array.isArray(v)) return v.length === 0
  for (const _ in v) return false
  return true
}

const emptyStructTexts = new WeakMap<StructShape, string>()

/** What Go writes for an unset field it does not leave out (see FieldShape.whenUnset). */
export function unsetText(field: FieldShape): string {
  const text = field.whenUnset ?? 'null'
  if (text !== EMPTY_STRUCT || field.shape.kind !== 'struct') return text
  let empty = emptyStructTexts.get(field.shape)
  if (empty === undefined) emptyStructTexts.set(field.shape, (empty = writeStruct({}, field.shape, () => UNSTRUCTURED, true)))
  return empty
}

/**
 * The keys `v` holds, in the order Go declares them along `shape`. The keys
 * present are few next to the fields declared (PodSpec declares 45): those
 * are walked, not the declaration. Fields the shape does not know (newer
 * than the type tables) are kept, after the known ones, in their own order.
 */
export function keysInDeclarationOrder(v: Record<string, unknown>, shape: StructShape): string[] {
  const keys = Object.keys(v)
  const index = shape.index
  const unknownRank = shape.fields.length
  let previous = -1
  for (const k of keys) {
    const rank = index.get(k) ?? unknownRank
    if (rank < previous) return keys.sort((a, b) => (index.get(a) ?? unknownRank) - (index.get(b) ?? unknownRank))
    previous = rank
  }
  return keys
}

function writeStruct(v: Record<string, unknown>, shape: StructShape, objectShape: ObjectShapeOf, asGo: boolean): string {
  const keys = keysInDeclarationOrder(v, shape)
  const index = shape.index
  const unknownRank = shape.fields.length
  let out = '{'
  let first = true
  // Fields Go writes though unset go in their declared places among the keys present.
  const unset = asGo ? shape.unset : NONE
  let next = 0
  for (const k of keys) {
    const rank = index.get(k) ?? unknownRank
    while (next < unset.length && unset[next]! < rank) {
      const field = shape.fields[unset[next++]!]!
      out += (first ? '' : ',') + field.key + unsetText(field)
      first = false
    }
    if (unset[next] === rank) next++
    const field = rank === unknownRank ? undefined : shape.fields[rank]
    const item = v[k]
    if (item === undefined || (item === null && asGo)) {
      if (!asGo || field?.whenUnset === undefined) continue
      out += (first ? '' : ',') + field.key + unsetText(field)
      first = false
      continue
    }
    if (field && (field.omitEmpty || (asGo && field.goOmitEmpty)) && isEmptyValue(item)) continue
    out += (first ? '' : ',') + (field ? field.key + write(item, field.shape, objectShape, asGo) : `${JSON.stringify(k)}:${JSON.stringify(item)}`)
    first = false
  }
  while (next < unset.length) {
    const field = shape.fields[unset[next++]!]!
    out += (first ? '' : ',') + field.key + unsetText(field)
    first = false
  }
  return `${out}}`
}

function write(v: unknown, shape: Shape, objectShape: ObjectShapeOf, asGo: boolean): string {
  switch (shape.kind) {
    case 'struct':
      return isRecord(v) ? writeStruct(v, shape, objectShape, asGo) : (JSON.stringify(v) ?? 'null')
    case 'array': {
      if (!Array.isArray(v)) return JSON.stringify(v) ?? 'null'
      let out = '['
      for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + write(v[i] ?? null, shape.item, objectShape, asGo)
      return `${out}]`
    }
    case 'map': {
      if (!isRecord(v)) return JSON.stringify(v) ?? 'null'
      let out = '{'
      let first = true
      for (const k of sortedKeys(v)) {
        const item = v[k]
        if (item === undefined) continue
        out += `${first ? '' : ','}${JSON.stringify(k)}:${write(item, shape.value, objectShape, asGo)}`
        first = false
      }
      return `${out}}`
    }
    case 'unstructured':
      return writeUnstructured(v)
    case 'object':
      return isRecord(v) ? write(v, objectShape(v), objectShape, asGo) : (JSON.stringify(v) ?? 'null')
    default:
      return JSON.stringify(v) ?? 'null'
  }
}

const HTML_UNSAFE_ALL = /[<>&\u2028\u2029]/g
const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
}

/**
 * Go's HTML-safe escaping. These characters can only stand inside strings
 * in JSON text, so one pass over the whole text is exact.
 */
export function escapeLikeGo(json: string): string {
  // Five plain searches are quicker than one character-class search over a long text.
  const unsafe = json.includes('<') || json.includes('>') || json.includes('&') || json.includes('\u2028') || json.includes('\u2029')
  return unsafe ? json.replace(HTML_UNSAFE_ALL, (c) => GO_ESCAPES[c]!) : json
}

/** `value` as json.Marshal writes it along `shape` (no trailing newline). */
export function marshalGo(value: unknown, shape: Shape, objectShape: ObjectShapeOf = () => UNSTRUCTURED): string {
  return escapeLikeGo(write(value, shape, objectShape, true))
}

/** The same before escaping, for callers that escape a larger text once. */
export function marshalGoUnescaped(value: unknown, shape: Shape, objectShape: ObjectShapeOf = () => UNSTRUCTURED): string {
  return write(value, shape, objectShape, true)
}

/**
 * `value` in the order Go writes along `shape`, its values as they are:
 * unset fields stay unset and empty ones empty (before escaping). No server
 * path writes this text (canonicalCopy builds the object directly,
 * go-ordered-copy.ts): it is the definition that copy is tested against.
 */
export function marshalInGoOrder(value: unknown, shape: Shape, objectShape: ObjectShapeOf = () => UNSTRUCTURED): string {
  return write(value, shape, objectShape, false)
}

/**
 * What json.Indent(compact, "", "  ") makes of compact JSON text (and so
 * json.MarshalIndent): a line per element, two spaces a level, `": "`
 * between key and value, empty objects and arrays left as `{}` and `[]`.
 * Works on the text, so order and escapes stay exactly as written.
 */
export function indentGo(compact: string): string {
  return runAtOnce(indentGoInSteps(compact))
}

/** Tokens between which indentGo writes nothing: one of `{}[]:,`, or a run of anything else but a string. */
const STRUCTURAL_OR_RUN = /[{}[\]:,]|[^"{}[\]:,]+/y
/** Tokens written between two checkpoints (a string counts as one, found by a search however long). */
const TOKENS_PER_STEP = 4096

/**
 * indentGo as checkpointed work: a megabyte's answer to `?pretty=true` held
 * the thread a fifth of a second, a character at a time. Strings are found
 * whole by a search, and runs between them taken by a sticky pattern.
 */
export function* indentGoInSteps(compact: string): Checkpointed<string> {
  const out: string[] = []
  const newlines = ['\n']
  let depth = 0
  const newline = (): string => (newlines[depth] ??= `\n${'  '.repeat(depth)}`)
  const token = new RegExp(STRUCTURAL_OR_RUN.source, 'y')
  let tokens = 0
  let i = 0
  while (i < compact.length) {
    if (++tokens % TOKENS_PER_STEP === 0) yield
    if (compact.charCodeAt(i) === 0x22 /* " */) {
      const end = jsonStringEnd(compact, i + 1, compact.length)
      // An unterminated string (not JSON): the rest as it is.
      const close = end < 0 ? compact.length : end + 1
      out.push(compact.slice(i, close))
      i = close
      continue
    }
    token.lastIndex = i
    const text = token.exec(compact)![0]
    i += text.length
    switch (text) {
      case '{':
      case '[': {
        const closing = text === '{' ? '}' : ']'
        if (compact[i] === closing) {
          out.push(text + closing)
          i++
          break
        }
        depth++
        out.push(text, newline())
        break
      }
      case '}':
      case ']':
        depth--
        out.push(newline(), text)
        break
      case ',':
        out.push(',', newline())
        break
      case ':':
        out.push(': ')
        break
      default:
        out.push(text)
    }
  }
  return out.join('')
}
