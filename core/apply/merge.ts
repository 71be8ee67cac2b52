/**
 * The value operations of apply: merging a configuration into a live object
 * (structs and maps per field, list-maps per key, sets per value, anything
 * atomic replaced), removing the items of a field set, and widening a set so
 * that a struct field whose contents are owned counts as owned itself.
 * Semantics follow structured-merge-diff's typed/merge.go and remove.go.
 */
import { setKey } from '../machinery/object.js'
import { type Checkpointed, runAtOnce, StepCounter } from '../machinery/time-slice.js'
import { FieldSet } from './fieldset.js'
import { elementId, type PathElement } from './path.js'
import { childShape, isNamedField, isObject, itemElement, ownValue, resolveShape, type Shape } from './typed.js'

const LEAF: Shape = { kind: 'leaf' }

function emptyOrAbsent(v: unknown, list: boolean): boolean {
  if (v === undefined || v === null) return true
  return list ? !Array.isArray(v) || v.length === 0 : !isObject(v) || Object.keys(v).length === 0
}

/**
 * Values an apply's walks (the merge, the removal, the clean-up of nulls, the
 * field sets) go through between two checkpoints: they are generators, run
 * at once for an ordinary object and in slices for one of megabytes.
 */
const applySteps = new StepCounter()

/** lhs with rhs merged in; undefined when neither side leaves anything. */
export function mergeValues(lhs: unknown, rhs: unknown, declared: Shape): unknown {
  return runAtOnce(mergeValuesInSteps(lhs, rhs, declared))
}

export function* mergeValuesInSteps(lhs: unknown, rhs: unknown, declared: Shape): Checkpointed<unknown> {
  if (lhs === undefined && rhs === undefined) return undefined
  const shape = resolveShape(declared, lhs, rhs)
  const leaf =
    shape.kind === 'leaf' ||
    (emptyOrAbsent(lhs, shape.kind === 'list') && emptyOrAbsent(rhs, shape.kind === 'list'))
  if (leaf) return rhs !== undefined ? rhs : lhs
  if (shape.kind === 'list') {
    const out = yield* mergeLists(Array.isArray(lhs) ? lhs : [], Array.isArray(rhs) ? rhs : [], shape)
    return out.length > 0 ? out : undefined
  }
  const l = isObject(lhs) ? lhs : {}
  const r = isObject(rhs) ? rhs : {}
  const out: Record<string, unknown> = {}
  for (const name of new Set([...Object.keys(l), ...Object.keys(r)])) {
    const merged = yield* mergeValuesInSteps(ownValue(l, name), ownValue(r, name), childShape(shape, name) ?? LEAF)
    if (merged !== undefined) setKey(out, name, merged)
    if (applySteps.add()) yield
  }
  return Object.keys(out).length > 0 ? out : undefined
}

interface Indexed {
  /** the item's path element as elementId writes it */
  id: string
  item: unknown
  /** a key seen more than once on the live side: such items are not merged */
  duplicated: boolean
}

interface IndexedList {
  items: Indexed[]
  /** the first item of each identity */
  first: Map<string, Indexed>
}

/**
 * A list's items with their identities; the first item of an identity seen again is marked duplicated.
 * Telling an item's identity serializes its keys or value: 200,000 of them held the thread some 150 ms.
 */
function* indexItems(list: unknown[], shape: Shape & { kind: 'list' }): Checkpointed<IndexedList> {
  const items: Indexed[] = []
  const first = new Map<string, Indexed>()
  for (const item of list) {
    if (applySteps.add()) yield
    const pe = itemElement(shape, item)
    if (typeof pe === 'string') continue
    const entry: Indexed = { id: elementId(pe), item, duplicated: false }
    const earlier = first.get(entry.id)
    if (earlier) earlier.duplicated = true
    else first.set(entry.id, entry)
    items.push(entry)
  }
  return { items, first }
}

/**
 * Items of both sides in one list: live items keep their places, items the
 * configuration names follow its order, and new items come right after the
 * configured item before them.
 */
function* mergeLists(lhs: unknown[], rhs: unknown[], shape: Shape & { kind: 'list' }): Checkpointed<unknown[]> {
  const { items: left, first: inLeft } = yield* indexItems(lhs, shape)
  const { items: right, first: inRight } = yield* indexItems(rhs, shape)
  const liveItem = (id: string): unknown => {
    const found = inLeft.get(id)
    return found && !found.duplicated ? found.item : undefined
  }
  // the configured items also live, in the configuration's order
  const shared = right.filter((r) => inLeft.has(r.id)).map((r) => r.id)
  let sharedAt = 0
  const done = new Set<string>()
  const out: unknown[] = []
  function* emit(l: unknown, r: unknown): Checkpointed<void> {
    const merged = yield* mergeValuesInSteps(l, r, shape.elem)
    if (merged !== undefined) out.push(merged)
    if (applySteps.add()) yield
  }
  let nextShared = shared[sharedAt++]
  let li = 0
  let ri = 0
  while (li < left.length || ri < right.length) {
    const l = left[li]
    const r = right[ri]
    if (l && r) {
      if (l.id === r.id) {
        done.add(l.id)
        yield* emit(liveItem(l.id), r.item)
        li++
        ri++
        nextShared = shared[sharedAt++]
        continue
      }
      if (inRight.has(l.id) && nextShared !== undefined && nextShared !== l.id) {
        // a shared item the configuration places later: it is emitted there
        li++
        continue
      }
    }
    if (l) {
      if (!inRight.has(l.id)) {
        yield* emit(l.item, undefined)
        li++
        continue
      } else if (done.has(l.id)) {
        li++
      }
    }
    if (r) {
      done.add(r.id)
      yield* emit(liveItem(r.id), r.item)
      ri++
      if (nextShared === r.id) nextShared = shared[sharedAt++]
    }
  }
  return out
}

/**
 * The value without the paths of toRemove. A map or list left empty becomes
 * null, as upstream leaves it; dropNulls cleans those up afterwards.
 */
export function* removeItems(value: unknown, toRemove: FieldSet, declared: Shape): Checkpointed<unknown> {
  const shape = resolveShape(declared, value)
  if (shape.kind === 'leaf') return value
  if (shape.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0) return null
    const out: unknown[] = []
    for (const item of value) {
      if (applySteps.add()) yield
      const pe = itemElement(shape, item)
      if (typeof pe === 'string') {
        out.push(item)
        continue
      }
      if (toRemove.has([pe])) continue
      const below = toRemove.withPrefix(pe)
      out.push(below.isEmpty() ? item : yield* removeItems(item, below, shape.elem))
    }
    return out.length > 0 ? out : null
  }
  if (!isObject(value) || Object.keys(value).length === 0) return null
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(value)) {
    if (applySteps.add()) yield
    const child = value[name]
    const pe = { field: name }
    if (toRemove.has([pe])) continue
    const below = toRemove.withPrefix(pe)
    setKey(out, name, below.isEmpty() ? child : yield* removeItems(child, below, childShape(shape, name) ?? LEAF))
  }
  return Object.keys(out).length > 0 ? out : null
}

/** Drops null struct fields and map entries, which Go's types would not keep. */
export function* dropNulls(value: unknown): Checkpointed<unknown> {
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const item of value) {
      out.push(yield* dropNulls(item))
      if (applySteps.add()) yield
    }
    return out
  }
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(value)) {
    const v = value[k]
    if (v !== null && v !== undefined) setKey(out, k, yield* dropNulls(v))
    if (applySteps.add()) yield
  }
  return out
}

/** The set plus every struct field that has owned paths below it (upstream's EnsureNamedFieldsAreMembers). */
export function ensureNamedFieldsAreMembers(set: FieldSet, declared: Shape): FieldSet {
  // a deduced value has no named fields at any depth
  if (declared.kind === 'deduced') return set
  const { members, children } = set.entries()
  if (children.length === 0) return set
  const named: PathElement[] = []
  let widenedBelow = false
  // Each level rebuilt once from its widened children: inserting paths one by one copied a level per path.
  const widened = children.map((child) => {
    let inner: Shape = LEAF
    if ('field' in child.pe) {
      if (isNamedField(declared, child.pe.field)) named.push(child.pe)
      inner = childShape(declared, child.pe.field) ?? LEAF
    } else if (declared.kind === 'list') inner = declared.elem
    const below = ensureNamedFieldsAreMembers(child.set, inner)
    if (below === child.set) return child
    widenedBelow = true
    return { pe: child.pe, set: below }
  })
  if (!widenedBelow && named.every((pe) => set.has([pe]))) return set
  return FieldSet.fromParts([...members, ...named], widened)
}
