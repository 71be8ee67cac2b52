/**
 * API objects as upstream's JSON serializer writes them: Go's field order
 * and escapes (go-json.ts, json-shapes.ts) and the newline json.Encoder
 * ends every value with. Objects, lists, tables, Status and discovery
 * documents all leave the server through here; each watch event is one such
 * line. An object already in canonical order (canonical.ts) is handed to
 * the engine's JSON.stringify, the rest are written along their shape.
 */
import { isCanonical } from './canonical.js'
import { escapeLikeGo, marshalGo, marshalGoUnescaped, type Shape } from './go-json.js'
import { EncodingMemo, isDeepFrozen } from './immutable.js'
import { jsonTextInSteps } from '../machinery/json-text.js'
import { isMarkedLarge } from '../machinery/large-objects.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { shapeOfObject, STATUS_SHAPE, VERSION_INFO_SHAPE } from './json-shapes.js'

function unescapedJson(value: unknown, shape: Shape): string {
  return isCanonical(value, shape) ? (JSON.stringify(value) ?? 'null') : marshalGoUnescaped(value, shape, shapeOfObject)
}

/**
 * The item type of a built-in list, when the list is one. Upstream's items
 * carry no kind and apiVersion: storage hands back typed objects without
 * them and the encoder sets them on the list alone. (Custom resources'
 * lists are unstructured and keep them; PartialObjectMetadataList sets them.)
 */
function typedListItems(value: Record<string, unknown>, shape: Shape): Shape | undefined {
  if (shape.kind !== 'struct' || !Array.isArray(value['items']) || value['apiVersion'] === 'meta.k8s.io/v1') return undefined
  const items = shape.fields[shape.index.get('items') ?? -1]?.shape
  return items?.kind === 'array' && items.item.kind === 'struct' && items.item.fields[0]?.name === 'kind' ? items.item : undefined
}

/** An item's text without the kind and apiVersion it opens with (they come first in Go's order). */
function withoutTypeMeta(item: unknown, text: string): string {
  if (typeof item !== 'object' || item === null) return text
  const { kind, apiVersion } = item as { kind?: unknown; apiVersion?: unknown }
  let rest = text.slice(1)
  for (const [name, v] of [['kind', kind], ['apiVersion', apiVersion]] as const) {
    if (typeof v !== 'string' || v === '') continue
    const field = `"${name}":${JSON.stringify(v)}`
    if (!rest.startsWith(field)) return text
    rest = rest.slice(field.length + (rest[field.length] === ',' ? 1 : 0))
  }
  return `{${rest}`
}

/**
 * A built-in list. When the list and every item are in canonical order the
 * engine writes it in one call, items copied (shallowly) without kind and
 * apiVersion; otherwise field by field.
 */
function typedListJson(list: Record<string, unknown>, shape: Shape & { kind: 'struct' }, item: Shape): string {
  const items = list['items'] as unknown[]
  const stripped: unknown[] = []
  for (const it of items) {
    if (typeof it !== 'object' || it === null || !isCanonical(it, item)) break
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = it as Record<string, unknown>
    stripped.push(rest)
  }
  if (stripped.length === items.length) {
    // The list's own fields, put in order here; only its metadata needs a look.
    const whole: Record<string, unknown> = {}
    let fits = Object.keys(list).every((k) => shape.index.has(k))
    for (const field of shape.fields) {
      const v = list[field.name]
      if (v === undefined || (field.omitEmpty && v === '')) continue
      if (field.name !== 'items' && !isCanonical(v, field.shape)) fits = false
      whole[field.name] = field.name === 'items' ? stripped : v
    }
    if (fits) return JSON.stringify(whole)
  }
  let out = '{'
  for (const field of shape.fields) {
    const v = list[field.name]
    if (v === undefined || (field.omitEmpty && v === '')) continue
    out += `${out.length > 1 ? ',' : ''}${field.key}`
    if (field.name !== 'items') {
      out += unescapedJson(v, field.shape)
      continue
    }
    const items = v as unknown[]
    out += '['
    for (let i = 0; i < items.length; i++) out += (i ? ',' : '') + withoutTypeMeta(items[i], unescapedJson(items[i] ?? null, item))
    out += ']'
  }
  return `${out}}`
}

/** Each immutable object's text as an answer, and as an item of its built-in list (escaped, without kind and apiVersion). */
const objectTexts = new EncodingMemo<string>()
const listItemTexts = new EncodingMemo<string>()

function listItemText(item: unknown, shape: Shape): string {
  return listItemTexts.of(item, (it) => escapeLikeGo(withoutTypeMeta(it, unescapedJson(it ?? null, shape))))
}

/**
 * A built-in list whose items are all immutable (the watch cache's): the
 * list's own fields around the items' kept texts, the same text the list
 * gets written whole (escaping goes character by character, so it may be
 * applied piece by piece). The items' texts are made once per object version.
 * The list's text keeps Go's escapes; the caller adds nothing but the newline.
 */
function keptItemsListJson(list: Record<string, unknown>, items: unknown[], item: Shape): string | undefined {
  if (items.length === 0 || !items.every(isDeepFrozen)) return undefined
  const frame = listFrame(list)
  if (!frame) return undefined
  let out = frame.head
  for (let i = 0; i < items.length; i++) out += (i ? ',' : '') + listItemText(items[i], item)
  return out + frame.tail
}

/** A list's text up to its items' `[` and from their `]` on (escaped, no newline), when it has items. */
function listFrame(list: Record<string, unknown>, field = 'items'): { head: string; tail: string } | undefined {
  const empty = apiObjectJson({ ...list, [field]: [] })
  const opening = `"${field}":[`
  const at = empty.lastIndexOf(`${opening}]`)
  if (at < 0) return undefined
  const open = at + opening.length
  return { head: empty.slice(0, open), tail: empty.slice(open, empty.length - 1) }
}

const TABLE_API_VERSION = 'meta.k8s.io/v1'
const NO_ROW_OBJECT = '"object":null}'

/**
 * A Table whose every row carries an immutable object (the watch cache's
 * version, or the PartialObjectMetadata kept for it): the table's fields and
 * each row's cells written here, each object's kept text put in where the
 * row writes it, last (TableRow's order: cells, conditions, object). The
 * same text the table gets written whole; the objects' texts are made once
 * per object version, while the cells (an age among them) are written anew.
 */
function keptObjectsTableJson(table: Record<string, unknown>, shape: Shape): string | undefined {
  const rows = table['rows']
  if (!Array.isArray(rows) || rows.length === 0 || shape.kind !== 'struct') return undefined
  const rowsShape = shape.fields[shape.index.get('rows') ?? -1]?.shape
  if (rowsShape?.kind !== 'array') return undefined
  for (const row of rows) if (typeof row !== 'object' || row === null || !isDeepFrozen((row as { object?: unknown }).object)) return undefined
  const frame = listFrame(table, 'rows')
  if (!frame) return undefined
  let out = frame.head
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Record<string, unknown>
    // The row written with no object ends in its `"object":null}`, where the kept text goes.
    const written = escapeLikeGo(unescapedJson({ ...row, object: null }, rowsShape.item))
    if (!written.endsWith(NO_ROW_OBJECT)) return undefined
    const kept = apiObjectJson(row['object'] as Record<string, unknown>)
    out += `${i ? ',' : ''}${written.slice(0, -NO_ROW_OBJECT.length)}"object":${kept.slice(0, -1)}}`
  }
  return out + frame.tail
}

/** An API object (its shape found from its apiVersion and kind) as one line of JSON; kept for an immutable one. */
export function apiObjectJson(value: Record<string, unknown>): string {
  return objectTexts.of(value, objectJson)
}

function objectJson(value: Record<string, unknown>): string {
  const shape = shapeOfObject(value)
  if (value['kind'] === 'Table' && value['apiVersion'] === TABLE_API_VERSION) {
    const kept = keptObjectsTableJson(value, shape)
    if (kept !== undefined) return `${kept}\n`
  }
  const items = typedListItems(value, shape)
  if (items && shape.kind === 'struct') {
    const kept = keptItemsListJson(value, value['items'] as unknown[], items)
    if (kept !== undefined) return `${kept}\n`
  }
  const text = items && shape.kind === 'struct' ? typedListJson(value, shape, items) : unescapedJson(value, shape)
  return `${escapeLikeGo(text)}\n`
}

const objectByteArrays = new EncodingMemo<Uint8Array>()

/**
 * apiObjectJsonBytes as checkpointed work, for an object of megabytes in
 * Go's order (as the stores keep objects): JSON.stringify's text written in
 * steps (json-text.ts), then escaped as Go escapes. A list, a Table and an
 * object not in Go's order are encoded at once, as apiObjectJsonBytes does.
 */
export function* apiObjectJsonBytesInSteps(value: Record<string, unknown>): Checkpointed<Uint8Array> {
  const kept = objectByteArrays.kept(value)
  if (kept) return kept
  const shape = shapeOfObject(value)
  if (value['kind'] === 'Table' || typedListItems(value, shape) || !isCanonical(value, shape)) return apiObjectJsonBytes(value)
  yield
  const text = (yield* jsonTextInSteps(value)) ?? 'null'
  yield
  return objectByteArrays.keep(value, utf8.encode(`${escapeLikeGo(text)}\n`))
}

/**
 * apiObjectJson's data as JSON text written in steps, for an object in Go's
 * order: the same data once read (the text is not escaped as Go escapes, and
 * has no newline). A list, a Table and an object not in Go's order are
 * encoded at once, as apiObjectJson does.
 */
export function* apiObjectJsonTextInSteps(value: Record<string, unknown>): Checkpointed<string> {
  const shape = shapeOfObject(value)
  if (value['kind'] === 'Table' || typedListItems(value, shape) || !isCanonical(value, shape)) return apiObjectJson(value)
  return (yield* jsonTextInSteps(value)) ?? 'null'
}

/**
 * An item of `list` as the list's JSON writes it (a built-in list's item
 * without kind and apiVersion), as apiObjectJsonTextInSteps writes text: for
 * a list of objects of a megabyte, each written in steps.
 */
export function* listItemJsonTextInSteps(list: Record<string, unknown>, item: unknown): Checkpointed<string> {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return JSON.stringify(item) ?? 'null'
  const text = yield* apiObjectJsonTextInSteps(item as Record<string, unknown>)
  return typedListItems(list, shapeOfObject(list)) ? withoutTypeMeta(item, text) : text
}

/**
 * apiObjectJson's text as UTF-8, the body of an answer: kept for an immutable
 * object (a watch cache's), so that reading the same version again encodes
 * nothing. The text is not kept beside the bytes.
 */
export function apiObjectJsonBytes(value: Record<string, unknown>): Uint8Array {
  return objectByteArrays.of(value, (v) => utf8.encode(objectJson(v)))
}

/** A metav1.Status as one line of JSON, whatever its kind field says. */
export function statusJson(status: object): string {
  return `${escapeLikeGo(unescapedJson(status, STATUS_SHAPE))}\n`
}

/** One watch event: `{"type":...,"object":...}` (metav1.WatchEvent's order) and a newline. */
export function watchEventJson(type: string, object: unknown): string {
  // Escaping goes character by character: the type and the object's (kept) text are escaped apart.
  return `{"type":${escapeLikeGo(JSON.stringify(type))},"object":${eventObjectText(object)}}\n`
}

/**
 * An object's text in an event is its text as an answer without the newline: an immutable version's is
 * kept (apiObjectJson), one text whether it is read or watched, and a Table event is written around its
 * row's kept object.
 */
function eventObjectText(object: unknown): string {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return escapeLikeGo(JSON.stringify(object))
  return apiObjectJson(object as Record<string, unknown>).slice(0, -1)
}

/** /version's document, compact (respond.ts indents it as upstream's WriteRawJSON does). */
export function versionInfoJson(info: object): string {
  return marshalGo(info, VERSION_INFO_SHAPE)
}

/**
 * A list's JSON as UTF-8 in pieces (`apiObjectJson(list)` once they are
 * joined and decoded): the list's fields up to its items, runs of items, and
 * its end. A large list is written out as its answer is read, so its JSON
 * never exists whole beside the objects, and other requests run between the
 * pieces. An immutable item of a built-in list keeps its bytes (not its
 * text), and a run of such items keeps its joined bytes while it lasts
 * (runAt), so a list read again is mostly handed out as it was.
 */
export function* apiListJsonByteChunks(list: Record<string, unknown>, itemsPerChunk = 100): Generator<Uint8Array, void, void> {
  const items = list['items']
  const frame = Array.isArray(items) && items.length > 0 ? apiObjectJson({ ...list, items: [] }) : undefined
  const at = frame?.lastIndexOf('"items":[]') ?? -1
  if (!frame || at < 0 || !Array.isArray(items)) {
    yield utf8.encode(apiObjectJson(list))
    return
  }
  const open = at + '"items":['.length
  const tail = frame.length - open
  yield utf8.encode(frame.slice(0, open))
  const itemShape = typedListItems(list, shapeOfObject(list))
  const itemBytes = (item: unknown) => (itemShape && isDeepFrozen(item) ? listItemBytes(item, itemShape) : utf8.encode(itemInList(list, item, open, tail)))
  for (let start = 0; start < items.length; ) {
    const run = runAt(items, start, itemsPerChunk, itemBytes, itemShape !== undefined)
    // Every run starts with the comma that goes before its first item; the list's first item has none.
    yield start === 0 ? run.bytes.subarray(1) : run.bytes
    start += run.count
  }
  yield utf8.encode(frame.slice(open))
}

/** A run of a list's items stops once it holds this many bytes, however few its items: a list of large objects goes out a megabyte or so at a time. */
export const LIST_CHUNK_BYTES = 1024 * 1024

const utf8 = new TextEncoder()
const COMMA = 0x2c

/** A deep-frozen list item's UTF-8 bytes as its built-in list writes it, made once per object version. */
const listItemByteArrays = new EncodingMemo<Uint8Array>()

function listItemBytes(item: object, shape: Shape): Uint8Array {
  return listItemByteArrays.ofFrozen(item, (it) => utf8.encode(escapeLikeGo(withoutTypeMeta(it, unescapedJson(it, shape)))))
}

/**
 * The bytes of a built-in list's large items (deep-frozen and marked large,
 * as the watch cache holds objects of megabytes), made ahead in steps and
 * kept where apiListJsonByteChunks finds them: encoded as the list is read,
 * each such item held the thread in one piece.
 */
export function* largeListItemsInSteps(list: Record<string, unknown>): Checkpointed<void> {
  const items = list['items']
  const shape = Array.isArray(items) ? typedListItems(list, shapeOfObject(list)) : undefined
  if (!shape) return
  for (const item of items as unknown[]) {
    if (!isDeepFrozen(item) || !isMarkedLarge(item) || listItemByteArrays.kept(item) !== undefined) continue
    const text = isCanonical(item, shape) ? ((yield* jsonTextInSteps(item)) ?? 'null') : unescapedJson(item, shape)
    yield
    listItemByteArrays.keep(item, utf8.encode(escapeLikeGo(withoutTypeMeta(item, text))))
  }
}

/** A run of deep-frozen items as runAt last joined it, found by the run's first item. */
const keptRuns = new WeakMap<object, { items: readonly unknown[]; bytes: Uint8Array }>()

/**
 * The run of items from `start` joined (joinRun), and how many items it
 * holds: up to `itemsPerChunk` of them, fewer once LIST_CHUNK_BYTES are
 * reached. A run of deep-frozen items of a built-in list (`keepable`) is
 * kept, found by its first item, and handed out again while the same
 * objects follow it: the watch cache gives a collection that has not
 * changed as the same objects in the same order, so a list read again
 * copies nothing (allocating and filling the bytes of a run was the
 * largest cost of a long list after the socket write). A run that changed
 * is joined and kept anew. What is kept lives as long as the run's first
 * object version: the bytes, and the run's objects.
 */
function runAt(items: readonly unknown[], start: number, itemsPerChunk: number, itemBytes: (item: unknown) => Uint8Array, keepable: boolean): { bytes: Uint8Array; count: number } {
  const first = items[start]
  const kept = keepable && isDeepFrozen(first) ? keptRuns.get(first) : undefined
  if (kept && sameRun(kept.items, items, start)) return { bytes: kept.bytes, count: kept.items.length }
  const parts: Uint8Array[] = []
  let size = 0
  let frozen = keepable
  for (let i = start; i < items.length && parts.length < itemsPerChunk && size < LIST_CHUNK_BYTES; i++) {
    const item = items[i]
    frozen &&= isDeepFrozen(item)
    const part = itemBytes(item)
    parts.push(part)
    size += part.byteLength
  }
  const bytes = joinRun(parts)
  if (frozen) keptRuns.set(first as object, { items: items.slice(start, start + parts.length), bytes })
  return { bytes, count: parts.length }
}

/** Whether the items from `start` begin with the kept run's objects. */
function sameRun(kept: readonly unknown[], items: readonly unknown[], start: number): boolean {
  if (start + kept.length > items.length) return false
  for (let i = 0; i < kept.length; i++) if (kept[i] !== items[start + i]) return false
  return true
}

/** Items' bytes in one allocation, a comma before each. */
function joinRun(items: Uint8Array[]): Uint8Array {
  let size = items.length
  for (const item of items) size += item.byteLength
  const out = new Uint8Array(size)
  let at = 0
  for (const item of items) {
    out[at++] = COMMA
    out.set(item, at)
    at += item.byteLength
  }
  return out
}

/** One item's text as its list writes it, cut out of the list written around it alone. */
function itemInList(list: Record<string, unknown>, item: unknown, open: number, tail: number): string {
  const one = apiObjectJson({ ...list, items: [item] })
  return one.slice(open, one.length - tail)
}
