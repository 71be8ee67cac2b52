/**
 * The `$` keys of a strategic merge patch and the clean-up of patch values
 * that land in the result without being merged.
 */
import { badPrimitiveListFormat, badRetainKeysFormat, badSetElementOrderFormat } from './errors.js'
import { isJsonMap, type JsonMap } from '../machinery/go-format.js'
import { setKey } from '../machinery/object.js'
import { type Checkpointed, StepCounter } from '../machinery/time-slice.js'

export const PATCH_DIRECTIVE = '$patch'
export const RETAIN_KEYS = '$retainKeys'
export const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList'
export const SET_ELEMENT_ORDER = '$setElementOrder'

/** Sets a key as an own property, so a `__proto__` key in a patch stays data. */
export { setKey }

/** `$setElementOrder/containers` -> `containers`; a prefixed key without `/` is malformed (400). */
export function listKeyOf(key: string, prefix: typeof DELETE_FROM_PRIMITIVE_LIST | typeof SET_ELEMENT_ORDER): string {
  const slash = key.indexOf('/')
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST ? badPrimitiveListFormat() : badSetElementOrderFormat()
  }
  return key.slice(slash + 1)
}

function isDirectiveKey(key: string): boolean {
  return (
    key === PATCH_DIRECTIVE ||
    key === RETAIN_KEYS ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST) ||
    key.startsWith(SET_ELEMENT_ORDER)
  )
}

/** The keys and items a merge handles between two checkpoints (`if (mergeSteps.add()) yield`). */
export const mergeSteps = new StepCounter()

/**
 * A patch value taken as it is (a replaced field, an appended list item):
 * directive keys and null fields go, as decoding upstream's result into the
 * typed object drops them.
 */
export function* settle(value: unknown): Checkpointed<unknown> {
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const item of value) {
      out.push(isContainer(item) ? yield* settle(item) : item)
      if (mergeSteps.add()) yield
    }
    return out
  }
  if (!isJsonMap(value)) return value
  const out: JsonMap = {}
  for (const k of Object.keys(value)) {
    const v = value[k]
    if (mergeSteps.add()) yield
    if (v === null || isDirectiveKey(k)) continue
    setKey(out, k, isContainer(v) ? yield* settle(v) : v)
  }
  return out
}

const DROPPED = Symbol('dropped')

/** A list or a map: what the walks here go into (a scalar is taken as it is, without a step of its own). */
const isContainer = (v: unknown): boolean => Array.isArray(v) || isJsonMap(v)

function* withoutDirectiveMaps(value: unknown): Checkpointed<unknown> {
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (const item of value) {
      const kept = isContainer(item) ? yield* withoutDirectiveMaps(item) : item
      if (kept !== DROPPED) out.push(kept)
      if (mergeSteps.add()) yield
    }
    return out
  }
  if (!isJsonMap(value)) return value
  if (Object.hasOwn(value, PATCH_DIRECTIVE)) return DROPPED
  const out: JsonMap = {}
  for (const k of Object.keys(value)) {
    const v = value[k]
    const kept = isContainer(v) ? yield* withoutDirectiveMaps(v) : v
    if (kept !== DROPPED) setKey(out, k, kept)
    if (mergeSteps.add()) yield
  }
  return out
}

/**
 * A patch value for a field the original lacks: as upstream, any map in it
 * that carries `$patch` is left out (and the field itself when it is one),
 * and null fields are dropped. Returns undefined when nothing is left.
 */
export function* newValue(value: unknown): Checkpointed<unknown> {
  const kept = yield* withoutDirectiveMaps(value)
  return kept === DROPPED ? undefined : yield* settle(kept)
}

/**
 * `$retainKeys: [a, b]`: every other key of the original goes. Each key the
 * patch sets must be listed (400 otherwise). Consumes the directive.
 */
export function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return
  const listed = patch[RETAIN_KEYS]
  delete patch[RETAIN_KEYS]
  if (!Array.isArray(listed)) throw badRetainKeysFormat()
  const retained = new Set<unknown>(listed)
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue
    if (!retained.has(k)) throw badRetainKeysFormat()
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k]
}
