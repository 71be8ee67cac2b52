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

/** Upstream's in-place dedupe: a later duplicate is overwritten by the last item. */
export function dedupeScalars(items: readonly unknown[]): unknown[] {
  const s = [...items]
  let last = s.length - 1
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (s[i] === s[j]) {
        s[j] = s[last]
        s.length = last
        last--
        j--
      }
    }
  }
  return s
}

/** The merge key value of a map item (undefined for anything else); the item itself for scalars. */
function identity(item: unknown, mergeKey: string, kind: ElementKind): unknown {
  if (kind !== 'map') return item
  return isJsonMap(item) ? item[mergeKey] : undefined
}

function indexIn(list: readonly unknown[], item: unknown, mergeKey: string, kind: ElementKind): number {
  const wanted = identity(item, mergeKey, kind)
  return list.findIndex((v) => identity(v, mergeKey, kind) === wanted)
}

/** Finds the map item whose merge key has this value. */
export function findByKey(
  list: readonly unknown[],
  mergeKey: string,
  value: unknown,
): { item: Record<string, unknown>; index: number } | undefined {
  for (const [index, item] of list.entries()) {
    if (!isJsonMap(item)) throw cannotApply(`value for key ${index} is not a map`)
    if (Object.hasOwn(item, mergeKey) && item[mergeKey] === value) return { item, index }
  }
  return undefined
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
  for (const v of items) {
    if (!isJsonMap(v)) throw badArgType('map', v)
    if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey)
    ;(findByKey(by, mergeKey, v[mergeKey]) ? named : rest).push(v)
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
function sortByOrder(items: readonly unknown[], order: readonly unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let kept = [...items]
  let deleted: unknown[] = []
  if (kind === 'map') {
    requireMergeKey(mergeKey, items as unknown[], order as unknown[])
    kept = items.filter((v) => !(isJsonMap(v) && v[PATCH_DIRECTIVE] === 'delete'))
    deleted = items.filter((v) => isJsonMap(v) && v[PATCH_DIRECTIVE] === 'delete')
  }
  const rank = (v: unknown): number => {
    const i = indexIn(order, v, mergeKey, kind)
    return i < 0 ? Number.MAX_SAFE_INTEGER : i
  }
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
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind)
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind)
  const out: unknown[] = []
  let i = 0
  let j = 0
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++])
    else if (j >= right.length) out.push(left[i++])
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind)
      const ri = indexIn(serverOrder, right[j], mergeKey, kind)
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++])
      else out.push(right[j++])
    }
  }
  return out
}
