/**
 * A large YAML document composed in pieces. The yaml package's Composer
 * turns one CST document into nodes in one synchronous run, which for a
 * map of twenty thousand keys holds the thread for a long time. Here a big
 * block collection is split into batches of its items, each composed as a
 * document of its own (offsets kept, so errors name the same lines), with a
 * yield between batches. Only collections whose items cannot behave
 * differently alone are split (plain implicit keys, no properties, no
 * anchors or aliases anywhere); anything else is composed whole.
 */
import { Composer, CST, type Document, isMap, isScalar, isSeq, type Node, visit, YAMLError } from 'yaml'
import type { TimeSlice } from '../machinery/time-slice.js'
import { appendAll } from '../machinery/append-all.js'

/** What composing yields: the plain value and the duplicate keys found (upstream's lines, without the header). */
export interface Composed {
  value: unknown
  duplicates: string[]
}

export interface ComposeContext {
  slice: TimeSlice
  findDuplicates: boolean
  /** Raises the document's first error in the decoder's words. */
  fail(error: YAMLError): never
  /** The line of an offset, for duplicate-key messages. */
  lineOf(offset: number): number
  maxAliasCount: number
}

/** CST items composed in one piece: some 0.2 ms of the Composer's work, well under a slice. */
const BATCH_ITEMS = 32

/**
 * `logLevel: 'error'`: the yaml package warns on the process (a line on
 * stderr) for a body with a collection as a key, which any client may send
 * on every request.
 */
export const COMPOSER_OPTIONS = { uniqueKeys: false, merge: false, logLevel: 'error' } as const

type Item = CST.BlockMap['items'][number] | CST.BlockSequence['items'][number] | CST.FlowCollection['items'][number]

const FILLER = new Set(['space', 'newline', 'comment'])
const FLOW_SCALARS = new Set(['scalar', 'single-quoted-scalar', 'double-quoted-scalar'])

function onlyFiller(tokens: readonly CST.SourceToken[] | undefined, allowed: ReadonlySet<string> = FILLER): boolean {
  return (tokens ?? []).every((t) => allowed.has(t.type))
}

function count(tokens: readonly CST.SourceToken[] | undefined, type: string): number {
  return (tokens ?? []).filter((t) => t.type === type).length
}

const isBlock = (token: CST.Token | null | undefined): token is CST.BlockMap | CST.BlockSequence =>
  token?.type === 'block-map' || token?.type === 'block-seq'

/** The collections split into batches of items: block ones, and flow ones (`{a: 1, b: 2}`, `[1, 2]`). */
type Splittable = CST.BlockMap | CST.BlockSequence | CST.FlowCollection

const isSplittable = (token: CST.Token | null | undefined): token is Splittable => isBlock(token) || token?.type === 'flow-collection'

const isMapLike = (token: Splittable): boolean => token.type === 'block-map' || (token.type === 'flow-collection' && token.start.type === 'flow-map-start')

/**
 * An item that composes alone as it does among its siblings: an implicit
 * single-line key at the map's indent, one `:` and nothing but space and
 * comments around; a sequence entry with one `-` and nothing else.
 */
function standsAlone(collection: Splittable, item: Item, index: number): boolean {
  if (collection.type === 'flow-collection') return flowItemStandsAlone(collection, item, index)
  if (!onlyFiller(item.start, collection.type === 'block-seq' ? SEQ_START : FILLER)) return false
  if (collection.type === 'block-seq') return count(item.start, 'seq-item-ind') === 1 && !('key' in item && item.key)
  const { key, sep, value } = item as CST.BlockMap['items'][number]
  if (!key || !FLOW_SCALARS.has(key.type) || !('indent' in key) || key.indent !== collection.indent) return false
  if (!('source' in key) || /[\n\r]/.test(key.source)) return false
  if (!onlyFiller(sep, SEP) || count(sep, 'map-value-ind') !== 1) return false
  // A block collection on the key's own line is an error only the whole map reports.
  return !isBlock(value) || count(sep, 'newline') > 0
}

/**
 * A flow item that composes alone as among its siblings once its comma is
 * left out: a comma before it (none before the first), and a value; in a
 * map, a scalar key and one `:`; in a sequence, no key (a pair there is a
 * map of its own). Anything else (`{a, b}`, a trailing comma) is composed whole.
 */
function flowItemStandsAlone(collection: CST.FlowCollection, item: Item, index: number): boolean {
  // A collection not closed by its own bracket is an error whose words depend on what holds it: composed whole.
  const closer = collection.start.type === 'flow-map-start' ? 'flow-map-end' : 'flow-seq-end'
  if (!onlyFiller(collection.end, new Set([...FILLER, closer])) || count(collection.end, closer) !== 1) return false
  if (!onlyFiller(item.start, FLOW_START) || count(item.start, 'comma') !== (index === 0 ? 0 : 1) || !item.value) return false
  const { key, sep } = item as CST.FlowCollection['items'][number]
  if (collection.start.type === 'flow-seq-start') return !key && !sep
  if (!key || !FLOW_SCALARS.has(key.type)) return false
  return onlyFiller(sep, SEP) && count(sep, 'map-value-ind') === 1
}

const FLOW_START = new Set([...FILLER, 'comma'])
const SEQ_START = new Set([...FILLER, 'seq-item-ind'])
const SEP = new Set([...FILLER, 'map-value-ind'])

/** CST items under a token, counted once per token. */
class Weights {
  private readonly known = new Map<CST.Token, number>()

  of(token: CST.Token | null | undefined): number {
    if (!token) return 0
    const cached = this.known.get(token)
    if (cached !== undefined) return cached
    let weight = 1
    if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection')
      for (const item of token.items) weight += 1 + this.of('key' in item ? item.key : undefined) + this.of(item.value)
    this.known.set(token, weight)
    return weight
  }
}

function composeAlone(value: CST.Token, ctx: ComposeContext): Document {
  const token: CST.Document = { type: 'document', offset: value.offset, start: [], value, end: [] }
  const [doc] = [...new Composer(COMPOSER_OPTIONS).compose([token], true)]
  const problem = doc?.errors[0]
  if (problem) ctx.fail(problem)
  return doc!
}

function toJS(doc: Document, ctx: ComposeContext): unknown {
  try {
    return doc.toJS({ maxAliasCount: ctx.maxAliasCount })
  } catch (err) {
    if (err instanceof YAMLError) ctx.fail(err)
    throw err
  }
}

/** Duplicate keys of every map under `node`, each map checked on its own, outer maps first (go-yaml's order). */
export function duplicateKeysUnder(node: Node | Document | null | undefined, lineOf: (offset: number) => number): string[] {
  const found: string[] = []
  if (!node) return found
  visit(node, {
    Map(_, map) {
      const seen = new Set<string>()
      for (const pair of map.items) if (isScalar(pair.key)) checkKey(pair.key, seen, found, lineOf)
    },
  })
  return found
}

function checkKey(key: Node, seen: Set<string>, found: string[], lineOf: (offset: number) => number): void {
  if (!isScalar(key)) return
  const id = `${typeof key.value}:${String(key.value)}`
  if (!seen.has(id)) seen.add(id)
  else found.push(`  line ${lineOf(key.range?.[0] ?? 0)}: key ${JSON.stringify(String(key.value))} already set in map`)
}

/** Sets a key as the yaml package's toJS does: `__proto__` as an own property, never the prototype. */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/**
 * A collection of some of `collection`'s items, starting where its first
 * item starts: the composer measures a key's distance from there.
 */
function part(collection: Splittable, items: Item[]): Splittable {
  const first = items[0]!
  if (collection.type === 'flow-collection') {
    // The same brackets around the batch, its first item's comma left out: offsets stay those of the text.
    const lead = { ...first, start: first.start.filter((t) => t.type !== 'comma') }
    return { ...collection, items: [lead, ...items.slice(1)] } as CST.FlowCollection
  }
  const firstKey = 'key' in first ? first.key : undefined
  const offset = first.start[0]?.offset ?? firstKey?.offset ?? first.value?.offset ?? collection.offset
  return { ...collection, offset, items } as CST.BlockMap | CST.BlockSequence
}

class SlicedComposer {
  private readonly weights = new Weights()

  constructor(private readonly ctx: ComposeContext) {}

  /** True when `token` is big enough to split and every item composes alone as among its siblings. */
  async splits(token: CST.Token): Promise<boolean> {
    if (this.weights.of(token) <= BATCH_ITEMS || !isSplittable(token)) return false
    for (const [i, item] of token.items.entries()) {
      if (!standsAlone(token, item, i)) return false
      if (i % 256 === 255) await this.ctx.slice.pause()
    }
    return true
  }

  async compose(token: CST.Token): Promise<Composed> {
    if (isSplittable(token) && (await this.splits(token))) return isMapLike(token) ? this.map(token) : this.seq(token)
    const doc = composeAlone(token, this.ctx)
    const value = toJS(doc, this.ctx)
    await this.ctx.slice.pause()
    return { value, duplicates: this.ctx.findDuplicates ? duplicateKeysUnder(doc, this.ctx.lineOf) : [] }
  }

  /** Items in batches of about BATCH_ITEMS; an item bigger than that composed by itself, its value split in turn. */
  private async inBatches(
    collection: Splittable,
    onBatch: (doc: Document) => void,
    onBigItem: (item: Item) => Promise<void>,
  ): Promise<void> {
    let batch: Item[] = []
    let weight = 0
    const flush = async () => {
      if (batch.length === 0) return
      onBatch(composeAlone(part(collection, batch), this.ctx))
      batch = []
      weight = 0
      await this.ctx.slice.pause()
    }
    for (const item of collection.items) {
      const itemWeight = this.weights.of(item.value)
      // A flow collection composed apart from its block parent words some of its errors differently: only one that splits.
      if (itemWeight > BATCH_ITEMS && isSplittable(item.value) && (isBlock(item.value) || (await this.splits(item.value)))) {
        await flush()
        await onBigItem(item)
        continue
      }
      batch.push(item)
      weight += itemWeight + 1
      if (weight >= BATCH_ITEMS) await flush()
    }
    await flush()
  }

  private async map(map: Splittable): Promise<Composed> {
    const value: Record<string, unknown> = {}
    const seen = new Set<string>()
    const own: string[] = []
    const nested: string[] = []
    const { findDuplicates, lineOf } = this.ctx
    const take = (doc: Document) => {
      for (const [key, v] of Object.entries(toJS(doc, this.ctx) as Record<string, unknown>)) setKey(value, key, v)
      if (!findDuplicates || !isMap(doc.contents)) return
      for (const pair of doc.contents.items) {
        checkKey(pair.key as Node, seen, own, lineOf)
        appendAll(nested, duplicateKeysUnder(pair.value as Node | null, lineOf))
      }
    }
    await this.inBatches(map, take, async (item) => {
      // The key alone (its value left empty), then the value composed on its own.
      const keyDoc = composeAlone(part(map, [{ ...item, value: undefined }]), this.ctx)
      const [key] = Object.keys(toJS(keyDoc, this.ctx) as Record<string, unknown>)
      const inner = await this.compose(item.value!)
      setKey(value, key ?? '', inner.value)
      if (findDuplicates && isMap(keyDoc.contents)) {
        const pair = keyDoc.contents.items[0]
        if (pair) checkKey(pair.key as Node, seen, own, lineOf)
        appendAll(nested, inner.duplicates)
      }
    })
    return { value, duplicates: [...own, ...nested] }
  }

  private async seq(seq: Splittable): Promise<Composed> {
    const value: unknown[] = []
    const nested: string[] = []
    const take = (doc: Document) => {
      appendAll(value, (toJS(doc, this.ctx) as unknown[]))
      if (this.ctx.findDuplicates && isSeq(doc.contents))
        for (const node of doc.contents.items) appendAll(nested, duplicateKeysUnder(node as Node | null, this.ctx.lineOf))
    }
    await this.inBatches(seq, take, async (item) => {
      const inner = await this.compose(item.value!)
      value.push(inner.value)
      appendAll(nested, inner.duplicates)
    })
    return { value, duplicates: nested }
  }
}

/**
 * The document's value composed in slices, or undefined when the document
 * is one the split could read differently (directives, anchors or aliases,
 * anything after the document) and must be composed whole.
 */
export async function composeInSlices(
  tokens: readonly CST.Token[],
  hasAnchorsOrAliases: boolean,
  ctx: ComposeContext,
): Promise<Composed | undefined> {
  if (hasAnchorsOrAliases || tokens.length !== 1) return undefined
  const doc = tokens[0]!
  if (doc.type !== 'document' || !doc.value || !isSplittable(doc.value)) return undefined
  // A `---` must end its line: a block collection after it on the same line is an error of the whole document.
  if (!onlyFiller(doc.start, new Set([...FILLER, 'doc-start']))) return undefined
  if (count(doc.start, 'doc-start') > 0 && count(doc.start, 'newline') === 0) return undefined
  if (!onlyFiller(doc.end)) return undefined
  const composer = new SlicedComposer(ctx)
  return (await composer.splits(doc.value)) ? composer.compose(doc.value) : undefined
}
