/**
 * Where the items of a merged list end up: upstream's order rules for merge
 * lists (items named by the patch in the patch's or `$setElementOrder`'s
 * order, the server's other items kept in their relative order and
 * interleaved by their place in the live list).
 */
import { badArgType, cannotApply, listOfLists, noMergeKey } from './errors.js'
import { goPrint, goTypeOf, isJsonMap } from '../machinery/go-format.js'
import { PATCH_DIRECTIVE } from './directives.js'

/** 'map' for lists of objects, the Go type name otherwise. */
export type ElementKind = string

/** The one element type of the lists together; mixed types and nested lists fail as upstream. */
export function elementKind(...lists: readonly unknown[][]): ElementKind {
  let kind: string | undefined
  for (const list of lists) {
    for (const item of list) {
      const current = isJsonMap(item) ? 'map' : item === null ? 'nil' : goTypeOf(item)
      if (kind === undefined) {
        kind = current
        if (Array.isArray(item)) throw listOfLists()
      } else if (kind !== current) {
        throw cannotApply(`list element types are not identical: ${goPrint(lists)}`)
      }
    }
  }
  if (kind === undefined) throw cannotApply('no elements in any of the given slices')
  return kind
}

// Lookups below go through Maps built once per list: scanning the list for
// each item made a patch of tens of thousands of items (a Deployment's env)
// hold the server's one thread for tens of seconds. A Map keyed by the value
// itself matches exactly when `===` does (JSON has no NaN): "80" and 80 differ.

/** The merge key value of a map item (undefined for anything else); the item itself for scalars. */
function identity(item: unknown, mergeKey: string, kind: ElementKind): unknown {
  if (kind !== 'map') return item
  return isJsonMap(item) ? item[mergeKey] : undefined
}

/** Where each identity first appears in `list`, so `.get(identity) ?? -1` is its findIndex. */
function firstPositions(list: readonly unknown[], mergeKey: string, kind: ElementKind): Map<unknown, number> {
  const positions = new Map<unknown, number>()
  list.forEach((item, i) => {
    const id = identity(item, mergeKey, kind)
    if (!positions.has(id)) positions.set(id, i)
  })
  return positions
}

/**
 * The map items of a list by merge key value, answering what a scan from the
 * start would: the first item holding the key as an own field `===` the
 * value, and the refusal of a non-map item met before it. The list may grow
 * (`add` each appended item) and a merge may drop an item's key (a null in
 * the patch), which `find` notices.
 */
export class KeyIndex {
  private readonly positions = new Map<unknown, { at: number[]; next: number }>()
  /** The first item that is not a map: a scan refuses the list there. */
  private notMap = -1

  constructor(
    private readonly list: readonly unknown[],
    private readonly mergeKey: string,
  ) {
    for (let i = 0; i < list.length && this.notMap < 0; i++) this.add(i)
  }

  /** Takes in the item at `index`, which comes after every item taken in so far. */
  add(index: number): void {
    const item = this.list[index]
    if (!isJsonMap(item)) {
      if (this.notMap < 0) this.notMap = index
    } else if (Object.hasOwn(item, this.mergeKey)) {
      const value = item[this.mergeKey]
      const entry = this.positions.get(value)
      if (entry) entry.at.push(index)
      else this.positions.set(value, { at: [index], next: 0 })
    }
  }

  /** The index of the first item whose merge key is `value`, -1 for none. */
  find(value: unknown): number {
    const found = this.firstHolder(value)
    if (this.notMap >= 0 && (found < 0 || found > this.notMap)) {
      throw cannotApply(`value for key ${this.notMap} is not a map`)
    }
    return found
  }

  /** Passes over, for good, the items that lost the key after being taken in. */
  private firstHolder(value: unknown): number {
    const entry = this.positions.get(value)
    if (!entry) return -1
    let index = entry.at[entry.next]
    while (index !== undefined && !this.holds(index, value)) index = entry.at[++entry.next]
    return index ?? -1
  }

  private holds(index: number, value: unknown): boolean {
    const item = this.list[index]
    return isJsonMap(item) && Object.hasOwn(item, this.mergeKey) && item[this.mergeKey] === value
  }
}

/** Splits `items` into those `by` names (by merge key, or by value for scalars) and the rest. */
export function partition(
  items: readonly unknown[],
  by: readonly unknown[],
  mergeKey: string,
): { named: unknown[]; rest: unknown[] } {
  const named: unknown[] = []
  const rest: unknown[] = []
  if (!mergeKey) {
    const wanted = new Set(by)
    for (const v of items) (wanted.has(v) ? named : rest).push(v)
    return { named, rest }
  }
  const wanted = new KeyIndex(by, mergeKey)
  for (const v of items) {
    if (!isJsonMap(v)) throw badArgType('map', v)
    if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey)
    ;(wanted.find(v[mergeKey]) >= 0 ? named : rest).push(v)
  }
  return { named, rest }
}

function requireMergeKey(mergeKey: string, ...lists: readonly unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isJsonMap(item)) throw badArgType('map', item)
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey)
    }
  }
}

/** Sorts `items` by their place in `order` (stable); items marked `$patch: delete` go last. */
function sortByOrder(
  items: readonly unknown[],
  order: readonly unknown[],
  positions: Map<unknown, number>,
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  let kept = [...items]
  let deleted: unknown[] = []
  if (kind === 'map') {
    requireMergeKey(mergeKey, items as unknown[], order as unknown[])
    kept = items.filter((v) => !(isJsonMap(v) && v[PATCH_DIRECTIVE] === 'delete'))
    deleted = items.filter((v) => isJsonMap(v) && v[PATCH_DIRECTIVE] === 'delete')
  }
  const rank = (v: unknown): number => positions.get(identity(v, mergeKey, kind)) ?? Number.MAX_SAFE_INTEGER
  kept.sort((a, b) => rank(a) - rank(b))
  return [...kept, ...deleted]
}

/**
 * Puts the patch's items in `patchOrder` and the server-only items in
 * `serverOrder`, then interleaves them: a server-only item goes before a
 * patch item when the live list has it first.
 */
export function normalizeOrder(
  patchItems: readonly unknown[],
  serverOnly: readonly unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  const serverPositions = firstPositions(serverOrder, mergeKey, kind)
  const right = sortByOrder(patchItems, patchOrder, firstPositions(patchOrder, mergeKey, kind), mergeKey, kind)
  const left = sortByOrder(serverOnly, serverOrder, serverPositions, mergeKey, kind)
  const serverIndex = (v: unknown): number => serverPositions.get(identity(v, mergeKey, kind)) ?? -1
  const out: unknown[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++])
    else if (j >= right.length) out.push(left[i++])
    else {
      const li = serverIndex(left[i])
      const ri = serverIndex(right[j])
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
      else out.push(right[j++])
    }
  }
  return out
}
