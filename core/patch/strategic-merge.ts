/**
 * Strategic merge patch (application/strategic-merge-patch+json) as upstream's
 * apimachinery strategicpatch package applies it on the server, driven by the
 * generated type tables instead of Go struct tags:
 *
 * - maps merge key by key, null deletes a key, a map with `$patch: replace`
 *   replaces and one with `$patch: delete` becomes empty; `$retainKeys`
 *   drops the keys it does not list;
 * - lists with patchStrategy `merge` merge by their patchMergeKey (lists of
 *   scalars as sets), items with `$patch: delete` remove theirs, an item
 *   `{$patch: replace}` makes the list the patch's; other lists replace;
 * - `$deleteFromPrimitiveList/<list>` removes scalars, `$setElementOrder/<list>`
 *   orders the merged list;
 * - raw JSON fields merge as a JSON merge patch.
 */
import { typeTable } from '../resources/schema/index.js'
import type { TypeRef, TypeTable } from '../resources/schema/model.js'
import {
  applyRetainKeys,
  DELETE_FROM_PRIMITIVE_LIST,
  listKeyOf,
  newValue,
  PATCH_DIRECTIVE,
  SET_ELEMENT_ORDER,
  setKey,
  mergeSteps,
  settle,
} from './directives.js'
import { badArgType, badPatchType, cannotApply, doesNotFit, noMergeKey } from './errors.js'
import { goPrint, isJsonMap, type JsonMap } from '../machinery/go-format.js'
import { jsonMerge } from './json-merge.js'
import { elementKind, KeyIndex, normalizeOrder, partition } from './list-order.js'
import { isRaw, lookupField, lookupListField, structName } from './schema.js'
import { shapeError } from './shape.js'
import { cloneJson, cloneJsonInSteps } from '../machinery/object.js'
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

export { PatchError, type PatchErrorKind } from './errors.js'

/**
 * Applies `patch` to `original`, an object of the type named `typeName`
 * (e.g. `io.k8s.api.core.v1.Pod`). Returns a new object; the inputs are left
 * as they are. Throws PatchError with upstream's message.
 */
export function applyStrategicMergePatch(
  original: Record<string, unknown>,
  patch: Record<string, unknown>,
  typeName: string,
  types: TypeTable = typeTable,
): Record<string, unknown> {
  return runAtOnce(merged(cloneJson(original), cloneJson(patch), patch, typeName, types))
}

/**
 * applyStrategicMergePatch as checkpointed work, for a patch of megabytes:
 * the copies, the merge, the values taken as they are and the final check
 * each yield every few thousand keys or items.
 */
export function* applyStrategicMergePatchInSteps(
  original: Record<string, unknown>,
  patch: Record<string, unknown>,
  typeName: string,
  types: TypeTable = typeTable,
): Checkpointed<Record<string, unknown>> {
  return yield* merged(yield* cloneJsonInSteps(original), yield* cloneJsonInSteps(patch), patch, typeName, types)
}

/** The merge of copies the merge owns (it changes them in place); an error quotes the patch as sent. */
function* merged(original: JsonMap, patch: JsonMap, sent: JsonMap, typeName: string, types: TypeTable): Checkpointed<JsonMap> {
  if (types[typeName] === undefined) throw new Error(`strategic merge patch: no type ${typeName} in the type table`)
  const root: TypeRef = { ref: typeName }
  const result = yield* new Merger(types).mergeMap(original, patch, root)
  const problem = yield* shapeError(result, root, types)
  if (problem) throw doesNotFit(sent, problem)
  return result
}

type Kind = 'map' | 'list' | 'scalar' | 'null'

function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'list'
  return isJsonMap(value) ? 'map' : 'scalar'
}

class Merger {
  constructor(private readonly types: TypeTable) {}

  /** Merges `patch` into `original` (both owned by the merger, so changed in place). */
  *mergeMap(original: JsonMap, patch: JsonMap, type: TypeRef | undefined): Checkpointed<JsonMap> {
    // Raw JSON knows no directives: a `$patch` key there is data.
    if (isRaw(type, this.types)) return jsonMerge(original, patch) as JsonMap
    if (Object.hasOwn(patch, PATCH_DIRECTIVE)) return yield* mapDirective(patch)
    applyRetainKeys(original, patch)
    yield* this.applyElementOrders(original, patch, type)

    for (const patchKey of Object.keys(patch)) {
      if (mergeSteps.add()) yield
      const value = patch[patchKey]
      const deleteList = patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)
      const key = deleteList ? listKeyOf(patchKey, DELETE_FROM_PRIMITIVE_LIST) : patchKey
      if (value === null || value === undefined) {
        delete original[key]
        continue
      }
      const current = Object.hasOwn(original, key) ? original[key] : undefined
      if (current === undefined || kindOf(current) !== kindOf(value)) {
        // A field the original lacks, or one whose JSON type changes: the patch's value stands.
        if (deleteList) continue
        const taken = yield* newValue(value)
        if (taken === undefined) delete original[key]
        else setKey(original, key, taken)
        continue
      }
      if (isJsonMap(current)) {
        const meta = lookupField(type, key, this.types)
        const merged =
          meta.strategy === 'replace' ? yield* settle(value) : yield* this.mergeMap(current, value as JsonMap, meta.type)
        setKey(original, key, merged)
      } else if (Array.isArray(current)) {
        const meta = lookupListField(type, key, this.types)
        setKey(original, key, yield* this.mergeListField(current, value as unknown[], meta, deleteList))
      } else {
        setKey(original, key, value)
      }
    }
    return original
  }

  private *mergeListField(
    current: unknown[],
    value: unknown[],
    meta: { type: TypeRef | undefined; strategy: string; mergeKey: string },
    deleteList: boolean,
  ): Checkpointed<unknown[]> {
    // A deletion list works the same whatever the field's strategy, as upstream.
    if (meta.strategy !== 'merge' && !deleteList) return (yield* settle(value)) as unknown[]
    return yield* this.mergeList(current, value, meta.type, meta.mergeKey, deleteList)
  }

  private *mergeList(
    original: unknown[],
    patch: unknown[],
    itemType: TypeRef | undefined,
    mergeKey: string,
    deleteList: boolean,
  ): Checkpointed<unknown[]> {
    if (original.length === 0 && patch.length === 0) return original
    const kind = elementKind(original, patch)
    if (kind !== 'map') {
      if (deleteList) {
        const doomed = new Set(patch)
        return original.filter((v) => !doomed.has(v))
      }
      // Upstream dedupes in place, in an order of its own; the order rules
      // below place every distinct value anyway, so a Set gives the same list.
      const merged = [...new Set([...original, ...patch])]
      const { named, rest } = partition(merged, patch, '')
      return normalizeOrder(named, rest, patch, original, '', kind)
    }
    if (!mergeKey) throw cannotApply(`cannot merge lists without merge key for ${structName(itemType)}`)
    const { base, items } = yield* applyItemDirectives(original, patch, mergeKey)
    const merged = [...base] as JsonMap[]
    const byKey = new KeyIndex(merged, mergeKey)
    for (const item of items as JsonMap[]) {
      if (mergeSteps.add()) yield
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey)
      const found = byKey.find(item[mergeKey])
      const match = found < 0 ? undefined : merged[found]
      if (match) merged[found] = yield* this.mergeMap(match, item, itemType)
      else byKey.add(merged.push((yield* settle(item)) as JsonMap) - 1)
    }
    const { named, rest } = partition(merged, items, mergeKey)
    return normalizeOrder(named, rest, items, base, mergeKey, kind)
  }

  /**
   * `$setElementOrder/<list>`: merges the list with its patch (if any) and
   * orders the result as the directive says; consumes both from the patch.
   */
  private *applyElementOrders(original: JsonMap, patch: JsonMap, type: TypeRef | undefined): Checkpointed<void> {
    for (const directiveKey of Object.keys(patch)) {
      if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue
      const order = patch[directiveKey]
      delete patch[directiveKey]
      if (!Array.isArray(order)) throw badArgType('list', order)
      const key = listKeyOf(directiveKey, SET_ELEMENT_ORDER)
      const foundOriginal = Object.hasOwn(original, key)
      const foundPatch = Object.hasOwn(patch, key)
      const originalList = foundOriginal ? original[key] : []
      const patchList = foundPatch ? patch[key] : []
      if (!Array.isArray(originalList)) throw badArgType('list', originalList)
      if (!Array.isArray(patchList)) throw badArgType('list', patchList)
      const meta = lookupListField(type, key, this.types)
      checkAgainstOrder(patchList, order, meta.mergeKey)

      let merged: unknown[]
      if (foundOriginal && foundPatch) merged = yield* this.mergeListField(originalList, patchList, meta, false)
      else if (foundPatch) merged = (yield* newValue(patchList)) as unknown[]
      else if (foundOriginal) merged = originalList
      else continue

      const { named, rest } = partition(merged, order, meta.mergeKey)
      const kind = elementKind(originalList, patchList)
      setKey(original, key, normalizeOrder(named, rest, order, originalList, meta.mergeKey, kind))
      delete patch[key]
    }
  }
}

/** A patch map carrying `$patch`: replace stands for the map itself, delete empties it. */
function* mapDirective(patch: JsonMap): Checkpointed<JsonMap> {
  const directive = patch[PATCH_DIRECTIVE]
  if (directive === 'replace') return (yield* settle(patch)) as JsonMap
  if (directive === 'delete') return {}
  throw badPatchType(directive, patch)
}

/**
 * Items of a merge list carrying `$patch`: delete removes the original's item
 * with that key, replace makes the list the patch's other items, merge is
 * refused as upstream refuses it. Returns the list to merge into and the
 * remaining patch items.
 */
function* applyItemDirectives(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
): Checkpointed<{ base: unknown[]; items: unknown[] }> {
  const doomed = new Set<unknown>()
  let replace = false
  const items: unknown[] = []
  for (const item of patch as JsonMap[]) {
    if (!Object.hasOwn(item, PATCH_DIRECTIVE)) {
      items.push(item)
      continue
    }
    const directive = item[PATCH_DIRECTIVE]
    if (directive === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey)
      doomed.add(item[mergeKey])
    } else if (directive === 'replace') {
      replace = true
    } else if (directive === 'merge') {
      throw cannotApply('merging lists cannot yet be specified in the patch')
    } else {
      throw badPatchType(directive, item)
    }
  }
  if (replace) {
    const base: unknown[] = []
    for (const item of items) base.push(yield* settle(item))
    return { base, items: [] }
  }
  // One pass for all deletions: filtering per deletion made deleting many items quadratic.
  const base = original.filter((v) => !(isJsonMap(v) && Object.hasOwn(v, mergeKey) && doomed.has(v[mergeKey])))
  return { base, items }
}

/**
 * The patch's items (deletions aside) must appear in `$setElementOrder` in
 * the same relative order.
 */
function checkAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return
  let items = patchList
  if (mergeKey) {
    for (const item of patchList) if (!isJsonMap(item)) throw badArgType('map', item)
    items = patchList.filter((v) => (v as JsonMap)[PATCH_DIRECTIVE] !== 'delete')
  }
  let p = 0
  let o = 0
  while (p < items.length && o < order.length) {
    const item = items[p]
    if (isJsonMap(item) && Object.hasOwn(item, PATCH_DIRECTIVE)) {
      p++
      continue
    }
    if (sameKey(item, order[o], mergeKey)) p++
    o++
  }
  if (p < items.length) {
    throw cannotApply(
      `the order in patch list:\n${goPrint(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goPrint(order)}`,
    )
  }
}

function sameKey(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return left === right
  if (!isJsonMap(left)) throw badArgType('map', left)
  if (!isJsonMap(right)) throw badArgType('map', right)
  if (!Object.hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey)
  if (!Object.hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey)
  return left[mergeKey] === right[mergeKey]
}
