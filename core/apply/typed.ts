/**
 * An object seen through its type: how each value is owned (a struct per
 * field, a map per key, a list-map per item key, a set per value, anything
 * atomic as one leaf), the set of fields an object sets, the difference
 * between two objects, and the checks an applied configuration must pass.
 * Semantics follow structured-merge-diff's typed package.
 */
import type { FieldDef, TypeDef, TypeRef } from '../resources/schema/index.js'
import { fieldsByName, typeTable } from '../resources/schema/index.js'
import { FieldSet, type FieldSetChild } from './fieldset.js'
import { appendAllInSteps } from '../machinery/append-all.js'
import { type Checkpointed, runAtOnce, StepCounter, UNITS_PER_STEP } from '../machinery/time-slice.js'
import { compareValues, elementId, elementText, type Json, type PathElement } from './path.js'
import { ATOMIC_STRUCTS, FIELD_MAP_TYPE, GO_ZERO_FIELDS, KEY_DEFAULTS } from './schema-facts.js'

export type Shape =
  /**
   * Scalars, atomic lists/maps/structs, raw JSON and fields the tables do not
   * know. An atomic list or object from a schema keeps the shape of its
   * contents (`items`, `object`): owned as one, its contents are still checked.
   */
  | { kind: 'leaf'; items?: Shape; object?: Shape }
  | { kind: 'struct'; type: TypeDef }
  | { kind: 'map'; elem: Shape }
  | {
      kind: 'list'
      listType: 'set' | 'map'
      keys: readonly string[]
      elem: Shape
      elemType?: string
      /** the schema defaults of key fields, taken by an item that omits one */
      keyDefaults?: Readonly<Record<string, Json>>
    }
  /** an object described by a schema: named fields, and `rest` for any other key (none: not declared) */
  | { kind: 'fields'; fields: ReadonlyMap<string, Shape>; rest?: Shape }
  /**
   * A value whose own form decides (structured-merge-diff's deduced type,
   * what preserve-unknown-fields leaves untyped): an object is a granular
   * map of such values, anything else one leaf.
   */
  | { kind: 'deduced' }

const LEAF: Shape = { kind: 'leaf' }
export const DEDUCED: Shape = { kind: 'deduced' }
const DEDUCED_MAP: Shape = { kind: 'map', elem: DEDUCED }

/**
 * The shape a deduced value takes given the values at hand: a map when every
 * present value is an object, a leaf as soon as one is not.
 */
export function resolveShape(shape: Shape, ...values: unknown[]): Shape {
  if (shape.kind !== 'deduced') return shape
  return values.every((v) => v === undefined || v === null || isObject(v)) ? DEDUCED_MAP : LEAF
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * The object's own value for a key. `obj[name]` would read Object.prototype
 * for a key the object lacks (`__proto__`, `constructor`, `toString`), and
 * a map key removed on one side would look changed instead.
 */
export function ownValue(obj: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  return obj !== undefined && Object.hasOwn(obj, name) ? obj[name] : undefined
}

/** The shape of a top-level type by its definition name. */
export function shapeOfType(name: string): Shape {
  const type = typeTable[name]
  return type ? { kind: 'struct', type } : LEAF
}

function shapeOfRef(ref: TypeRef, field?: FieldDef, owner?: TypeDef): Shape {
  const override = field && owner ? FIELD_MAP_TYPE[`${owner.name}.${field.name}`] : undefined
  if ('scalar' in ref) return LEAF
  if ('ref' in ref) {
    const type = typeTable[ref.ref]
    if (!type) return LEAF
    // Upstream's OpenAPI gives hand-marshalled types (JSONSchemaPropsOrArray ...) no schema: deduced, as there.
    if (type.jsonForms) return DEDUCED
    if (override === 'atomic' || (ATOMIC_STRUCTS.has(type.name) && override !== 'granular')) return LEAF
    return { kind: 'struct', type }
  }
  if ('map' in ref) return override === 'atomic' ? LEAF : { kind: 'map', elem: shapeOfRef(ref.map) }
  const listType = field?.listType ?? 'atomic'
  if (listType === 'atomic') return LEAF
  const elemType = 'ref' in ref.array ? ref.array.ref : undefined
  return { kind: 'list', listType, keys: field?.listMapKeys ?? [], elem: shapeOfRef(ref.array), elemType }
}

/** Each struct's declared fields' shapes, made once: every write walks them (field ownership's comparison). */
const fieldShapes = new WeakMap<TypeDef, Map<string, Shape>>()

/** The shape of one member of a struct or map; undefined for a field the struct does not declare. */
export function childShape(shape: Shape, name: string): Shape | undefined {
  if (shape.kind === 'map') return shape.elem
  if (shape.kind === 'deduced') return DEDUCED
  if (shape.kind === 'fields') return shape.fields.get(name) ?? shape.rest
  if (shape.kind !== 'struct') return undefined
  let shapes = fieldShapes.get(shape.type)
  if (!shapes) fieldShapes.set(shape.type, (shapes = new Map()))
  let child = shapes.get(name)
  if (child) return child
  // Only declared fields are kept: names a client makes up are not.
  const field = fieldsByName(shape.type).get(name)
  if (!field) return undefined
  child = shapeOfRef(field.type, field, shape.type)
  shapes.set(name, child)
  return child
}

/** Whether a struct declares the field (map keys and unknown fields are not named fields). */
export function isNamedField(shape: Shape, name: string): boolean {
  if (shape.kind === 'fields') return shape.fields.has(name)
  return shape.kind === 'struct' && fieldsByName(shape.type).has(name)
}

/** The identity of a list item: its key fields (list-map) or its value (set); a string is the error. */
export function itemElement(shape: Shape & { kind: 'list' }, item: unknown): PathElement | string {
  if (shape.listType === 'map') {
    if (item === null) return 'associative list with keys may not have a null element'
    if (!isObject(item)) return 'associative list with keys may not have non-map elements'
    const key: [string, Json][] = []
    for (const name of shape.keys) {
      const v = ownValue(item, name)
      const fallback = (ownValue(shape.keyDefaults, name) as Json | undefined) ?? (shape.elemType ? KEY_DEFAULTS[shape.elemType]?.[name] : undefined)
      if (v !== undefined) key.push([name, v as Json])
      else if (fallback !== undefined) key.push([name, fallback])
      else return `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`
    }
    key.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return { key }
  }
  if (isObject(item)) return "associative list without keys has an element that's a map type"
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements'
  if (item === null) return "associative list without keys has an element that's an explicit null"
  return { value: item as Json }
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  return compareValues(a as Json, b as Json) === 0 && typeof a === typeof b
}

/** Values the walks here (the comparison, the check of an applied object, its field set) go through between two checkpoints. */
const valuesWalked = new StepCounter()

/**
 * The problems of an applied configuration, worded and prefixed as upstream
 * prints them (`.spec.containers: duplicate entries for key [name="x"]`).
 */
export function* validateAppliedInSteps(value: unknown, declared: Shape, prefix = ''): Checkpointed<string[]> {
  const errors: string[] = []
  const shape = resolveShape(declared, value)
  if (shape.kind === 'leaf') {
    if (shape.items && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        yield* appendAllInSteps(errors, yield* validateAppliedInSteps(value[i], shape.items, `${prefix}[${i}]`))
        if (valuesWalked.add()) yield
      }
    } else if (shape.object && isObject(value)) yield* appendAllInSteps(errors, yield* validateAppliedInSteps(value, shape.object, prefix))
  } else if (shape.kind === 'list' && Array.isArray(value)) {
    const seen = new Set<string>()
    for (let i = 0; i < value.length; i++) {
      const pe = itemElement(shape, value[i])
      if (typeof pe === 'string') {
        errors.push(`${prefix}: element ${i}: ${pe}`)
        return errors
      }
      const id = elementId(pe)
      if (seen.has(id)) errors.push(`${prefix}: duplicate entries for key ${elementText(pe)}`)
      seen.add(id)
      yield* appendAllInSteps(errors, yield* validateAppliedInSteps(value[i], shape.elem, prefix + elementText(pe)))
      if (valuesWalked.add()) yield
    }
  } else if (shape.kind !== 'list' && isObject(value)) {
    for (const name of Object.keys(value)) {
      const inner = childShape(shape, name)
      if (!inner) {
        errors.push(`${prefix}.${name}: field not declared in schema`)
        continue
      }
      const child = value[name]
      // A scalar under a leaf is fine as it is: no walk of its own.
      if (typeof child === 'object' && child !== null) yield* appendAllInSteps(errors, yield* validateAppliedInSteps(child, inner, `${prefix}.${name}`))
      if (valuesWalked.add()) yield
    }
  }
  return errors
}


/** The fields an object sets (upstream's ToFieldSet). */
export function fieldSetOf(value: unknown, shape: Shape): FieldSet {
  return runAtOnce(fieldSetOfInSteps(value, shape))
}

export function* fieldSetOfInSteps(value: unknown, shape: Shape): Checkpointed<FieldSet> {
  const below = yield* setBelow(value, shape)
  return below === 'leaf' ? FieldSet.empty() : below
}

/**
 * The set of the paths below a value, or `leaf` when the value is owned as
 * one (its own path is the member). Built level by level as the object is
 * walked: a list of paths grouped afterwards copied a path per field and
 * serialized every element, most of an apply's time and garbage over a
 * list of tens of thousands of items.
 */
function* setBelow(value: unknown, declared: Shape): Checkpointed<FieldSet | 'leaf'> {
  const shape = resolveShape(declared, value)
  if (shape.kind === 'leaf') return 'leaf'
  const members: PathElement[] = []
  const children: FieldSetChild[] = []
  if (shape.kind === 'list') {
    if (!Array.isArray(value)) return FieldSet.empty()
    // Telling the items' identities serializes each one's keys or value: a checkpoint every few thousand.
    const elements: (PathElement | string)[] = []
    const ids: (string | undefined)[] = []
    for (const item of value) {
      const pe = itemElement(shape, item)
      elements.push(pe)
      ids.push(typeof pe === 'string' ? undefined : elementId(pe))
      if (valuesWalked.add()) yield
    }
    const seen = new Set<string>()
    const duplicated = new Set<string>()
    for (const id of ids) {
      if (id === undefined) continue
      if (seen.has(id)) duplicated.add(id)
      else seen.add(id)
    }
    for (let i = 0; i < value.length; i++) {
      const pe = elements[i] as PathElement | string
      const id = ids[i]
      if (typeof pe === 'string' || id === undefined) continue
      // An item is a member; a duplicated one is owned as a whole (once), without its fields.
      if (duplicated.has(id)) {
        if (seen.delete(id)) members.push(pe)
        continue
      }
      members.push(pe)
      const below = yield* setBelow(value[i], shape.elem)
      if (below !== 'leaf' && !below.isEmpty()) children.push({ pe, set: below })
      if (valuesWalked.add()) yield
    }
    return yield* FieldSet.fromPartsInSteps(members, children)
  }
  if (!isObject(value)) return FieldSet.empty()
  for (const name of Object.keys(value)) {
    const child = value[name]
    if (child === undefined) continue
    const pe = { field: name }
    const childShapeOf = childShape(shape, name) ?? LEAF
    // A scalar is a member as it is, unless its shape says otherwise: resolveShape decides, without a walk of its own.
    const below = typeof child === 'object' && child !== null ? yield* setBelow(child, childShapeOf) : leafOrEmpty(child, childShapeOf)
    if (valuesWalked.add()) yield
    if (below === 'leaf') {
      members.push(pe)
      continue
    }
    if (!below.isEmpty()) children.push({ pe, set: below })
    if (child === null || (isObject(child) && Object.keys(child).length === 0) || !isNamedField(shape, name)) members.push(pe)
  }
  return FieldSet.fromParts(members, children)
}

/** setBelow of a value that holds no others (a scalar, null): `leaf`, or an empty set where its shape is a list or a struct. */
function leafOrEmpty(value: unknown, declared: Shape): FieldSet | 'leaf' {
  return resolveShape(declared, value).kind === 'leaf' ? 'leaf' : FieldSet.empty()
}

export interface Comparison {
  added: FieldSet
  modified: FieldSet
  removed: FieldSet
}

/** What changed from lhs to rhs, per owned field (upstream's Compare). */
export function compareObjects(lhs: unknown, rhs: unknown, shape: Shape): Comparison {
  // The root's own element is no field: only what lies below it is recorded.
  const root = new Changes()
  compareInto(lhs, rhs, shape, root, compareAt)
  return root.comparison()
}

/**
 * compareObjects as checkpointed work, for objects of megabytes: the values
 * below a level are compared after it, those holding objects in steps of
 * their own, with a checkpoint every few thousand values.
 */
export function* compareObjectsInSteps(lhs: unknown, rhs: unknown, shape: Shape): Checkpointed<Comparison> {
  const root = new Changes()
  yield* compareIntoInSteps(lhs, rhs, shape, root)
  return yield* root.comparisonInSteps()
}

const holdsValues = (v: unknown): boolean => typeof v === 'object' && v !== null

function* compareIntoInSteps(lhs: unknown, rhs: unknown, declared: Shape, inner: Changes): Checkpointed<Change> {
  const below: [unknown, unknown, Shape, PathElement][] = []
  const gather: CompareBelow = (l, r, shape, pe) => void below.push([l, r, shape, pe])
  let fields: [Record<string, unknown>, Record<string, unknown>, Shape] | undefined
  let lists: [unknown, unknown, Shape & { kind: 'list' }] | undefined
  const change = compareInto(
    lhs,
    rhs,
    declared,
    inner,
    gather,
    (l, r, shape) => void (fields = [l, r, shape]),
    (l, r, shape) => void (lists = [l, r, shape]),
  )
  if (fields) {
    // Telling a level empty or not was a pass over its keys already.
    yield
    yield* compareFieldsInSteps(...fields, inner)
  }
  // A list's items are told apart by their identities, a pass over each side: 200,000 of them held the thread most of a second.
  if (lists) yield* compareListsInSteps(...lists, inner, gather)
  if (below.length > UNITS_PER_STEP) yield
  for (const [l, r, shape, pe] of below) yield* compareBelowInSteps(l, r, shape, pe, inner)
  return change
}

/** compareFields in steps: a level of many fields is read in runs. */
function* compareFieldsInSteps(l: Record<string, unknown>, r: Record<string, unknown>, shape: Shape, inner: Changes): Checkpointed<void> {
  const names = Object.keys(l)
  if (names.length > UNITS_PER_STEP) yield
  for (const name of names) yield* compareBelowInSteps(l[name], ownValue(r, name), childShape(shape, name) ?? LEAF, { field: name }, inner)
  const added = Object.keys(r)
  if (added.length > UNITS_PER_STEP) yield
  for (const name of added) {
    if (!Object.hasOwn(l, name)) yield* compareBelowInSteps(undefined, r[name], childShape(shape, name) ?? LEAF, { field: name }, inner)
  }
}

function* compareBelowInSteps(lhs: unknown, rhs: unknown, declared: Shape, pe: PathElement, level: Changes): Checkpointed<void> {
  if (holdsValues(lhs) || holdsValues(rhs)) yield* compareAtInSteps(lhs, rhs, declared, pe, level)
  else compareAt(lhs, rhs, declared, pe, level)
  if (valuesWalked.add()) yield
}

function* compareAtInSteps(lhs: unknown, rhs: unknown, declared: Shape, pe: PathElement, level: Changes): Checkpointed<void> {
  if (lhs === undefined && rhs === undefined) return
  const inner = new Changes()
  const change = yield* compareIntoInSteps(lhs, rhs, declared, inner)
  yield* level.belowInSteps(pe, inner)
  if (change) level[change].add(pe)
}

/**
 * One level of a FieldSet being gathered: the elements it holds and the sets
 * below them, made into a FieldSet once the level is walked. The comparison
 * builds its three sets this way, level by level, rather than as lists of
 * whole paths grouped afterwards (a path copied per field and every element
 * serialized to group them made most of a create's field ownership).
 */
class Level {
  private members: PathElement[] | undefined
  private children: FieldSetChild[] | undefined

  add(pe: PathElement): void {
    ;(this.members ??= []).push(pe)
  }

  below(pe: PathElement, level: Level | undefined): void {
    if (level && (level.members || level.children)) (this.children ??= []).push({ pe, set: level.set() })
  }

  set(): FieldSet {
    return this.members || this.children ? FieldSet.fromParts(this.members ?? [], this.children ?? []) : FieldSet.empty()
  }

  *belowInSteps(pe: PathElement, level: Level | undefined): Checkpointed<void> {
    if (level && (level.members || level.children)) (this.children ??= []).push({ pe, set: yield* level.setInSteps() })
  }

  /** The level's set; sorting a level of a long list's items is work of its own, in steps. */
  *setInSteps(): Checkpointed<FieldSet> {
    return this.members || this.children ? yield* FieldSet.fromPartsInSteps(this.members ?? [], this.children ?? []) : FieldSet.empty()
  }
}

/** The three sets of a comparison at one level, each made when first written to. */
class Changes {
  #added: Level | undefined
  #modified: Level | undefined
  #removed: Level | undefined
  get added(): Level {
    return (this.#added ??= new Level())
  }
  get modified(): Level {
    return (this.#modified ??= new Level())
  }
  get removed(): Level {
    return (this.#removed ??= new Level())
  }
  /** The three sets, once every level below is recorded. */
  comparison(): Comparison {
    return { added: this.added.set(), modified: this.modified.set(), removed: this.removed.set() }
  }
  *comparisonInSteps(): Checkpointed<Comparison> {
    return { added: yield* this.added.setInSteps(), modified: yield* this.modified.setInSteps(), removed: yield* this.removed.setInSteps() }
  }
  /** Records `inner` (the changes below `pe`) under `pe`. */
  below(pe: PathElement, inner: Changes): void {
    if (inner.#added) this.added.below(pe, inner.#added)
    if (inner.#modified) this.modified.below(pe, inner.#modified)
    if (inner.#removed) this.removed.below(pe, inner.#removed)
  }
  /** below, with a large level's set made in steps. */
  *belowInSteps(pe: PathElement, inner: Changes): Checkpointed<void> {
    if (inner.#added) yield* this.added.belowInSteps(pe, inner.#added)
    if (inner.#modified) yield* this.modified.belowInSteps(pe, inner.#modified)
    if (inner.#removed) yield* this.removed.belowInSteps(pe, inner.#removed)
  }
}

/** How a value itself changed, as its parent records it: added, removed, modified, or none of them. */
type Change = 'added' | 'removed' | 'modified' | undefined

function isEmptyCollection(v: unknown, list: boolean): boolean {
  if (v === undefined || v === null) return true
  return list ? !Array.isArray(v) || v.length === 0 : !isObject(v) || Object.keys(v).length === 0
}

/** Compares the values at `pe` of a level, recording in `level` the change of the value and what changed below it. */
function compareAt(lhs: unknown, rhs: unknown, declared: Shape, pe: PathElement, level: Changes): void {
  if (lhs === undefined && rhs === undefined) return
  const inner = new Changes()
  const change = compareInto(lhs, rhs, declared, inner, compareAt)
  level.below(pe, inner)
  if (change) level[change].add(pe)
}

/** How the values below a level are compared: at once (compareAt), or gathered to compare in steps. */
type CompareBelow = (lhs: unknown, rhs: unknown, declared: Shape, pe: PathElement, level: Changes) => void

/** How the fields of two objects at one level are compared: at once (compareFields), or later in steps. */
type CompareFields = (lhs: Record<string, unknown>, rhs: Record<string, unknown>, shape: Shape, inner: Changes, below: CompareBelow) => void

/** How the items of two lists are compared: at once (compareLists), or later in steps. */
type CompareLists = (lhs: unknown, rhs: unknown, shape: Shape & { kind: 'list' }, inner: Changes, below: CompareBelow) => void

/** Compares every field of either object, the left one's first. */
function compareFields(l: Record<string, unknown>, r: Record<string, unknown>, shape: Shape, inner: Changes, below: CompareBelow): void {
  for (const name of Object.keys(l)) below(l[name], ownValue(r, name), childShape(shape, name) ?? LEAF, { field: name }, inner)
  for (const name of Object.keys(r)) if (!Object.hasOwn(l, name)) below(undefined, r[name], childShape(shape, name) ?? LEAF, { field: name }, inner)
}

/**
 * Records in `inner` what changed below the values (each compared by
 * `below`, an object's fields by `fields`); returns how the value itself changed.
 */
function compareInto(
  lhs: unknown,
  rhs: unknown,
  declared: Shape,
  inner: Changes,
  below: CompareBelow,
  fields: CompareFields = compareFields,
  lists: CompareLists = compareLists,
): Change {
  if (lhs === undefined && rhs === undefined) return undefined
  const shape = resolveShape(declared, lhs, rhs)
  if (declared.kind === 'deduced' && shape.kind === 'leaf') {
    // An untyped object replaced by a scalar or list (or the reverse): its fields went away (or came).
    if (isObject(lhs)) for (const [name, v] of Object.entries(lhs)) below(v, undefined, DEDUCED, { field: name }, inner)
    if (isObject(rhs)) for (const [name, v] of Object.entries(rhs)) below(undefined, v, DEDUCED, { field: name }, inner)
  }
  const leaf =
    shape.kind === 'leaf' ||
    (isEmptyCollection(lhs, shape.kind === 'list') && isEmptyCollection(rhs, shape.kind === 'list'))
  if (leaf) {
    if (lhs === undefined) return 'added'
    if (rhs === undefined) return 'removed'
    return jsonEqual(lhs, rhs) ? undefined : 'modified'
  }
  if (shape.kind === 'list') lists(lhs, rhs, shape, inner, below)
  else fields(isObject(lhs) ? lhs : {}, isObject(rhs) ? rhs : {}, shape, inner, below)
  if (lhs === undefined) return 'added'
  if (rhs === undefined) return 'removed'
  return undefined
}

interface ItemGroup {
  pe: PathElement
  items: unknown[]
}

/** A list's items by identity (elementId), in the order each identity first appears; a checkpoint every few thousand items. */
function* groupItems(list: unknown, shape: Shape & { kind: 'list' }): Checkpointed<Map<string, ItemGroup>> {
  const groups = new Map<string, ItemGroup>()
  if (!Array.isArray(list)) return groups
  for (const item of list) {
    if (itemsGrouped.add()) yield
    const pe = itemElement(shape, item)
    if (typeof pe === 'string') continue
    const id = elementId(pe)
    const g = groups.get(id)
    if (g) g.items.push(item)
    else groups.set(id, { pe, items: [item] })
  }
  return groups
}

const itemsGrouped = new StepCounter()

/** Compares the items of both sides per identity: the left side's identities first, then those only on the right. */
function compareLists(lhs: unknown, rhs: unknown, shape: Shape & { kind: 'list' }, inner: Changes, below: CompareBelow): void {
  runAtOnce(compareListsInSteps(lhs, rhs, shape, inner, below))
}

function* compareListsInSteps(lhs: unknown, rhs: unknown, shape: Shape & { kind: 'list' }, inner: Changes, below: CompareBelow): Checkpointed<void> {
  const left = yield* groupItems(lhs, shape)
  const right = yield* groupItems(rhs, shape)
  for (const [id, { pe, items }] of left) {
    compareItems(items, right.get(id)?.items ?? [], pe, shape, inner, below)
    if (itemsGrouped.add()) yield
  }
  for (const [id, { pe, items }] of right) {
    if (!left.has(id)) compareItems([], items, pe, shape, inner, below)
    if (itemsGrouped.add()) yield
  }
}

/** The items of one identity on each side; two or more on a side (duplicates) make a change of the whole item. */
function compareItems(l: unknown[], r: unknown[], pe: PathElement, shape: Shape & { kind: 'list' }, inner: Changes, below: CompareBelow): void {
  if (l.length <= 1 && r.length <= 1) below(l[0], r[0], shape.elem, pe, inner)
  else if (l.length >= 2 && r.length >= 2) {
    if (l.length !== r.length || l.some((x, i) => !jsonEqual(x, r[i]))) inner.modified.add(pe)
  } else if (l.length >= 2) {
    if (r.length > 0) below(undefined, r[0], shape.elem, pe, inner)
    inner.removed.add(pe)
  } else {
    if (l.length > 0) below(l[0], undefined, shape.elem, pe, inner)
    inner.added.add(pe)
  }
}

/**
 * An object of the type as Go's zero value encodes it: upstream compares a
 * created object against it, so a struct written even when empty (a spec, a
 * pod template) is never reported as added by itself.
 */
export function zeroValue(typeName: string): Record<string, unknown> {
  const type = typeTable[typeName]
  const out: Record<string, unknown> = {}
  if (!type) return out
  const names = new Set(GO_ZERO_FIELDS[typeName] ?? [])
  if (type.gvk) for (const n of ['metadata', 'spec', 'status']) names.add(n)
  for (const name of names) {
    const field = fieldsByName(type).get(name)
    if (!field) continue
    out[name] = 'ref' in field.type ? zeroValue(field.type.ref) : null
  }
  return out
}
