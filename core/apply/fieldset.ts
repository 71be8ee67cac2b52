/**
 * A set of field paths, stored as a tree: at each level the elements that
 * are members (the path ending here is in the set) and the children (deeper
 * paths sharing the element). This is the shape of FieldsV1, where `.` marks
 * a member that also has children. Sets are immutable; the algebra follows
 * structured-merge-diff (Difference removes exact paths; RecursiveDifference
 * removes whole subtrees).
 */
import {
  compareElements,
  deserializeElement,
  FieldsV1ParseError,
  formatPath,
  serializeElement,
  UnknownElementType,
  type Path,
  type PathElement,
} from './path.js'
import { type Checkpointed, StepCounter, UNITS_PER_STEP } from '../machinery/time-slice.js'
import { sortInSteps } from '../machinery/sort-in-steps.js'

/** FieldsV1 elements written between two checkpoints (toFieldsV1InSteps). */
const elementsWritten = new StepCounter()

/** A path prefix of field names, `*` standing for any one element (a list item, a map key). */
export type FieldPrefix = readonly string[]

const fieldName = (pe: PathElement | undefined): string | undefined => (pe && 'field' in pe ? pe.field : undefined)

/** A level's element and the set below it. */
export interface FieldSetChild {
  pe: PathElement
  set: FieldSet
}

/** Binary search: the index of pe, or -(insertion point) - 1. */
function find<T>(list: readonly T[], pe: PathElement, elementOf: (t: T) => PathElement): number {
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const c = compareElements(elementOf(list[mid] as T), pe)
    if (c === 0) return mid
    if (c < 0) lo = mid + 1
    else hi = mid - 1
  }
  return -lo - 1
}

const self = (pe: PathElement): PathElement => pe

/** Whether each element sorts after the one before it: the list is sorted and holds no duplicates. */
function strictlyOrdered<T>(list: readonly T[], elementOf: (t: T) => PathElement): boolean {
  for (let i = 1; i < list.length; i++) if (compareElements(elementOf(list[i - 1] as T), elementOf(list[i] as T)) >= 0) return false
  return true
}

/** strictlyOrdered with a checkpoint every few thousand elements: keyed items compare their keys' values. */
function* strictlyOrderedInSteps<T>(list: readonly T[], elementOf: (t: T) => PathElement): Checkpointed<boolean> {
  for (let i = 1; i < list.length; i++) {
    if (compareElements(elementOf(list[i - 1] as T), elementOf(list[i] as T)) >= 0) return false
    if (i % UNITS_PER_STEP === 0) yield
  }
  return true
}

/** Sorted elements without their repeats. */
function unique(sorted: PathElement[]): PathElement[] {
  return sorted.filter((pe, i) => i === 0 || compareElements(sorted[i - 1]!, pe) !== 0)
}

const childElement = (c: FieldSetChild): PathElement => c.pe
const byChildElement = (a: FieldSetChild, b: FieldSetChild): number => compareElements(a.pe, b.pe)

/** Sorted children with those of one element merged into one. */
function mergedChildren(sorted: FieldSetChild[]): FieldSetChild[] {
  const merged: FieldSetChild[] = []
  for (const child of sorted) {
    const last = merged[merged.length - 1]
    if (last && compareElements(last.pe, child.pe) === 0) merged[merged.length - 1] = { pe: last.pe, set: last.set.union(child.set) }
    else merged.push(child)
  }
  return merged
}

/** Merges two sorted lists; `pick` decides for elements present on one or both sides. */
function zip<T>(
  a: readonly T[],
  b: readonly T[],
  elementOf: (t: T) => PathElement,
  pick: (x: T | undefined, y: T | undefined) => T | undefined,
): T[] {
  const out: T[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const x = a[i]
    const y = b[j]
    let c: number
    if (x === undefined) c = 1
    else if (y === undefined) c = -1
    else c = compareElements(elementOf(x), elementOf(y))
    const r = c < 0 ? pick(x, undefined) : c > 0 ? pick(undefined, y) : pick(x, y)
    if (r !== undefined) out.push(r)
    if (c <= 0) i++
    if (c >= 0) j++
  }
  return out
}

/**
 * The elements held by all the set levels made so far, each counted when
 * its level is made: the work of building sets, which tests read to prove
 * that a write's ownership grows linearly with its lists (a count does
 * not vary with the machine as a clock does).
 */
let elementsPlaced = 0

export function fieldSetWork(): number {
  return elementsPlaced
}

export class FieldSet {
  private static readonly none = new FieldSet([], [])

  /** The elements of this level and of every level below it. */
  readonly size: number

  private constructor(
    private readonly members: readonly PathElement[],
    private readonly children: readonly FieldSetChild[],
  ) {
    elementsPlaced += members.length + children.length
    let size = members.length + children.length
    for (let i = 0; i < children.length; i++) size += children[i]!.set.size
    this.size = size
  }

  static empty(): FieldSet {
    return FieldSet.none
  }

  /** The set holding exactly the given paths. */
  static of(...paths: Path[]): FieldSet {
    return FieldSet.fromPaths(paths)
  }

  /**
   * The set holding exactly the given paths, built level by level: each
   * level's elements sorted once. Inserting one path at a time copies a
   * level's lists each time, which made an object of 20,000 map keys take
   * seconds (each insert O(n), so O(n²) in all).
   */
  static fromPaths(paths: readonly Path[], depth = 0): FieldSet {
    const members: PathElement[] = []
    const below = new Map<string, { pe: PathElement; paths: Path[] }>()
    for (const path of paths) {
      const pe = path[depth]
      if (pe === undefined) continue
      if (path.length === depth + 1) {
        members.push(pe)
        continue
      }
      const key = serializeElement(pe)
      const group = below.get(key)
      if (group) group.paths.push(path)
      else below.set(key, { pe, paths: [path] })
    }
    const children = [...below.values()].map(({ pe, paths: deeper }) => ({ pe, set: FieldSet.fromPaths(deeper, depth + 1) }))
    return FieldSet.fromParts(members, children)
  }

  /** A level from its member elements and children in any order, duplicates merged. */
  static fromParts(members: PathElement[], children: FieldSetChild[]): FieldSet {
    if (members.length === 0 && children.length === 0) return FieldSet.none
    // Most levels come in order already (FieldsV1 as written, a struct's fields): a pass that finds it so spares the sort.
    const uniqueMembers = strictlyOrdered(members, self) ? members : unique(members.sort(compareElements))
    if (strictlyOrdered(children, childElement)) return new FieldSet(uniqueMembers, children)
    return new FieldSet(uniqueMembers, mergedChildren(children.sort(byChildElement)))
  }

  /** fromParts with checkpoints for a large level (a long list's items): sorting 200,000 took a tenth of a second. */
  static *fromPartsInSteps(members: PathElement[], children: FieldSetChild[]): Checkpointed<FieldSet> {
    if (members.length + children.length <= UNITS_PER_STEP) return FieldSet.fromParts(members, children)
    const uniqueMembers = (yield* strictlyOrderedInSteps(members, self)) ? members : unique(yield* sortInSteps(members, compareElements))
    if (yield* strictlyOrderedInSteps(children, childElement)) return new FieldSet(uniqueMembers, children)
    return new FieldSet(uniqueMembers, mergedChildren(yield* sortInSteps(children, byChildElement)))
  }

  isEmpty(): boolean {
    return this.members.length === 0 && this.children.length === 0
  }

  insert(path: Path): FieldSet {
    const [head, ...rest] = path
    if (head === undefined) return this
    if (rest.length === 0) {
      const at = find(this.members, head, self)
      if (at >= 0) return this
      const members = [...this.members]
      members.splice(-at - 1, 0, head)
      return new FieldSet(members, this.children)
    }
    const at = find(this.children, head, childElement)
    const children = [...this.children]
    if (at >= 0) children[at] = { pe: head, set: (children[at] as FieldSetChild).set.insert(rest) }
    else children.splice(-at - 1, 0, { pe: head, set: FieldSet.none.insert(rest) })
    return new FieldSet(this.members, children)
  }

  has(path: Path): boolean {
    const [head, ...rest] = path
    if (head === undefined) return false
    if (rest.length === 0) return find(this.members, head, self) >= 0
    const at = find(this.children, head, childElement)
    return at >= 0 && (this.children[at] as FieldSetChild).set.has(rest)
  }

  /** The paths under one element, without that element (upstream's WithPrefix). */
  withPrefix(pe: PathElement): FieldSet {
    const at = find(this.children, pe, childElement)
    return at >= 0 ? (this.children[at] as FieldSetChild).set : FieldSet.none
  }

  // Each operation gives back an operand itself where the other changes nothing: sets are never changed in place,
  // and a write's ownership compares whole objects' sets with small ones (a reset `status`, one manager's fields).
  union(other: FieldSet): FieldSet {
    if (other.isEmpty()) return this
    if (this.isEmpty()) return other
    return new FieldSet(
      zip(this.members, other.members, self, (x, y) => x ?? y),
      zip(this.children, other.children, childElement, (x, y) => (x && y ? { pe: x.pe, set: x.set.union(y.set) } : (x ?? y))),
    )
  }

  intersection(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return FieldSet.none
    return new FieldSet(
      zip(this.members, other.members, self, (x, y) => (x && y ? x : undefined)),
      zip(this.children, other.children, childElement, (x, y) => {
        if (!x || !y) return undefined
        const set = x.set.intersection(y.set)
        return set.isEmpty() ? undefined : { pe: x.pe, set }
      }),
    )
  }

  /** The paths of this set that are not in other (exact paths: removing `a` keeps `a.b`). */
  difference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this
    return new FieldSet(
      zip(this.members, other.members, self, (x, y) => (x && !y ? x : undefined)),
      zip(this.children, other.children, childElement, (x, y) => {
        if (!x) return undefined
        if (!y) return x
        const set = x.set.difference(y.set)
        return set.isEmpty() ? undefined : { pe: x.pe, set }
      }),
    )
  }

  /** Like difference, but a member of other also removes everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this
    const removedSubtree = (pe: PathElement): boolean => find(other.members, pe, self) >= 0
    return new FieldSet(
      zip(this.members, other.members, self, (x, y) => (x && !y ? x : undefined)),
      this.children.flatMap((c) => {
        if (removedSubtree(c.pe)) return []
        const set = c.set.recursiveDifference(other.withPrefix(c.pe))
        return set.isEmpty() ? [] : [{ pe: c.pe, set }]
      }),
    )
  }

  /** Only the members that have nothing below them. */
  leaves(): FieldSet {
    return new FieldSet(
      this.members.filter((pe) => find(this.children, pe, childElement) < 0),
      this.children.flatMap((c) => {
        const set = c.set.leaves()
        return set.isEmpty() ? [] : [{ pe: c.pe, set }]
      }),
    )
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty()
  }

  /**
   * Only the paths at or below one of `prefixes`, a `*` matching any
   * element (structured-merge-diff's include-matcher filter, with which a
   * subresource's strategy says which fields it lets a writer own).
   */
  onlyUnder(prefixes: readonly FieldPrefix[]): FieldSet {
    const matches = (path: Path): boolean =>
      prefixes.some((prefix) => prefix.length <= path.length && prefix.every((want, i) => want === '*' || fieldName(path[i]) === want))
    return FieldSet.fromPaths(this.paths().filter(matches))
  }

  /** Every path, in upstream's iteration order: a level's members, then its children. */
  paths(): Path[] {
    const out: Path[] = []
    const walk = (s: FieldSet, prefix: PathElement[]): void => {
      for (const pe of s.members) out.push([...prefix, pe])
      for (const c of s.children) walk(c.set, [...prefix, c.pe])
    }
    walk(this, [])
    return out
  }

  /** The paths in upstream's printed form, one per line. */
  toString(): string {
    return this.paths().map(formatPath).join('\n')
  }

  /** Visits the member elements and child sets of this level (used by typed walks). */
  entries(): { members: readonly PathElement[]; children: readonly FieldSetChild[] } {
    return { members: this.members, children: this.children }
  }

  /** The FieldsV1 object: keys in order, `{}` for a member, `.` for a member with children. */
  toFieldsV1(): Record<string, unknown> {
    return this.emit(false)
  }

  /** toFieldsV1 as checkpointed work, for the set of an object of megabytes (a level of 250,000 keys took 200 ms at once). */
  toFieldsV1InSteps(): Checkpointed<Record<string, unknown>> {
    return this.emitInSteps(false)
  }

  /** `.` opens the object, as structured-merge-diff writes it (clients compare FieldsV1 as text). */
  private opened(includeSelf: boolean): Record<string, unknown> {
    return includeSelf && !this.isEmpty() ? { '.': {} } : {}
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out = this.opened(includeSelf)
    this.visitLevel({ member: 0, child: 0 }, Infinity, (key, set, member) => {
      out[key] = set ? set.emit(member) : {}
    })
    return out
  }

  private *emitInSteps(includeSelf: boolean): Checkpointed<Record<string, unknown>> {
    if (this.size <= UNITS_PER_STEP) {
      if (elementsWritten.add(this.size)) yield
      return this.emit(includeSelf)
    }
    const out = this.opened(includeSelf)
    const at = { member: 0, child: 0 }
    const below: [string, FieldSet, boolean][] = []
    for (;;) {
      const visited = this.visitLevel(at, UNITS_PER_STEP, (key, set, member) => {
        // The key takes its place now; its object is written below, in steps of its own.
        if (set) below.push([key, set, member])
        out[key] = set ? null : {}
      })
      for (const [key, set, member] of below) out[key] = yield* set.emitInSteps(member)
      below.length = 0
      if (visited === 0) return out
      if (elementsWritten.add(visited)) yield
    }
  }

  /**
   * Visits this level's elements in order from `at` (members and children
   * merged: a member with children is visited once), `limit` of them at most,
   * and moves `at` past them. Gives back how many it visited.
   */
  private visitLevel(at: { member: number; child: number }, limit: number, visit: (key: string, set: FieldSet | undefined, member: boolean) => void): number {
    const { members, children } = this
    let visited = 0
    while (visited < limit && (at.member < members.length || at.child < children.length)) {
      const m = members[at.member]
      const c = children[at.child]
      const order = m === undefined ? 1 : c === undefined ? -1 : compareElements(m, c.pe)
      if (order < 0) visit(serializeElement(m!), undefined, true)
      else visit(serializeElement(c!.pe), c!.set, order === 0)
      if (order <= 0) at.member++
      if (order >= 0) at.child++
      visited++
    }
    return visited
  }

  /** Reads FieldsV1; keys of unknown element types are dropped, as upstream does. */
  static fromFieldsV1(raw: unknown): FieldSet {
    if (raw === null || raw === undefined) return FieldSet.none
    if (typeof raw !== 'object' || Array.isArray(raw)) {
      throw new FieldsV1ParseError(`ReadMapCB: expect { or n, but found ${JSON.stringify(raw)?.[0] ?? '?'}`)
    }
    return readLevel(raw as Record<string, unknown>).children ?? FieldSet.none
  }
}


/** One FieldsV1 object: the set of its children, and whether it marks its own path as a member. */
function readLevel(obj: Record<string, unknown>): { children?: FieldSet; isMember: boolean } {
  // Gathered, then sorted once (FieldSet.fromParts): inserting one by one is quadratic in a level's size.
  const members: PathElement[] = []
  const children: FieldSetChild[] = []
  let entries = 0
  let isMember = false
  for (const [key, value] of Object.entries(obj)) {
    if (key === '.') {
      isMember = true
      continue
    }
    let pe: PathElement
    try {
      pe = deserializeElement(key)
    } catch (err) {
      if (err instanceof UnknownElementType) continue
      throw err
    }
    entries++
    if (value === null) {
      members.push(pe)
      continue
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new FieldsV1ParseError(`ReadMapCB: expect { or n, but found ${JSON.stringify(value)[0]}`)
    }
    const inner = readLevel(value as Record<string, unknown>)
    if (inner.isMember) members.push(pe)
    if (inner.children) children.push({ pe, set: inner.children })
  }
  if (entries === 0) return { isMember: true }
  return { children: FieldSet.fromParts(members, children), isMember }
}
