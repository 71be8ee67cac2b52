/**
 * JSON merge patch (RFC 7386) and JSON patch (RFC 6902, including `test`),
 * applied to plain JSON data. Failures are reported as upstream reports them:
 * a patch document that cannot be read is 400, one that cannot be applied 422.
 */
import { depthMessage, depthWalk, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS } from '../machinery/limits.js'
import { badRequest, requestEntityTooLarge } from '../machinery/status-error.js'
import { type Checkpointed, runInSlices, TimeSlice } from '../machinery/time-slice.js'
import { jsonBytes } from '../machinery/json-bytes.js'
import { cloneJson, cloneJsonInSteps, isPlainObject, setKey } from '../machinery/object.js'
import { PatchDocument, unprocessable } from './json-patch-document.js'

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch)
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

/** mergePatch as checkpointed work, for a patch or a target of megabytes: the same result. */
export function* mergePatchInSteps(target: unknown, patch: unknown): Checkpointed<unknown> {
  if (!isPlainObject(patch)) return yield* cloneJsonInSteps(patch)
  const result: Record<string, unknown> = {}
  if (isPlainObject(target)) {
    // `{ ...target }`, a run of keys at a time.
    const keys = Object.keys(target)
    for (let i = 0; i < keys.length; i++) {
      setKey(result, keys[i]!, target[keys[i]!])
      if ((i & KEYS_RUN) === KEYS_RUN) yield
    }
  }
  const keys = Object.keys(patch)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const value = patch[key]
    if (value === null) delete result[key]
    else result[key] = yield* mergePatchInSteps(result[key], value)
    if ((i & KEYS_RUN) === KEYS_RUN) yield
  }
  return result
}

/** Keys of one level handled between two checkpoints, less one (a mask). */
const KEYS_RUN = 2047

type Operation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string }

/** Reads and checks an RFC 6902 document; malformed documents are 400, more than 10000 operations 413. */
export function parseJsonPatch(doc: unknown): Operation[] {
  if (!Array.isArray(doc)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch')
  if (doc.length > MAX_JSON_PATCH_OPERATIONS)
    throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${doc.length}`)
  return doc.map((raw, i) => {
    if (!isPlainObject(raw)) throw badRequest(`invalid JSON patch operation at index ${i}: not an object`)
    const op = raw['op']
    if (typeof raw['path'] !== 'string') throw badRequest(`invalid JSON patch operation at index ${i}: missing path`)
    switch (op) {
      case 'add':
      case 'replace':
      case 'test':
        if (!('value' in raw)) throw badRequest(`invalid JSON patch operation at index ${i}: missing value`)
        return { op, path: raw['path'], value: raw['value'] }
      case 'remove':
        return { op, path: raw['path'] }
      case 'move':
      case 'copy':
        if (typeof raw['from'] !== 'string')
          throw badRequest(`invalid JSON patch operation at index ${i}: missing from`)
        return { op, from: raw['from'], path: raw['path'] }
      default:
        throw badRequest(`Unexpected kind: ${String(op)}`)
    }
  })
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

/**
 * Applies RFC 6902 operations to `target`, which stays as it is (see
 * json-patch-document.ts: nothing is copied until the patch has
 * succeeded). What `copy` operations add is counted against upstream's
 * budget (each could double the document), and the result may nest no
 * deeper than a decoded body. Operations run one by one in time slices.
 */
export async function applyJsonPatch(target: unknown, ops: Operation[], maxCopyBytes = JSON_PATCH_MAX_COPY_BYTES): Promise<unknown> {
  const slice = new TimeSlice()
  const doc = new PatchDocument(target)
  // The JSON size of each copied value: shared, it never changes, so a copy of copies is measured once.
  const sizes = new WeakMap<object, number>()
  let copied = 0
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        doc.add(op.path, doc.share(op.value))
        break
      case 'remove':
        doc.remove(op.path)
        break
      case 'replace': {
        doc.get(op.path)
        if (op.path === '') doc.add('', doc.share(op.value))
        else {
          doc.remove(op.path)
          doc.add(op.path, doc.share(op.value))
        }
        break
      }
      case 'move': {
        const value = doc.get(op.from)
        doc.remove(op.from)
        doc.add(op.path, value)
        break
      }
      case 'copy': {
        const value = doc.share(doc.get(op.from))
        // The bytes the value adds as JSON text, measured in slices: it may be megabytes.
        const bytes = await runInSlices(jsonBytes(value, (node) => sizes.get(node)), slice)
        if (value !== null && typeof value === 'object') sizes.set(value, bytes)
        copied += bytes
        if (copied > maxCopyBytes)
          throw unprocessable(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxCopyBytes}`)
        doc.add(op.path, value)
        break
      }
      case 'test':
        if (!deepEqual(doc.get(op.path), op.value)) throw unprocessable(`testing value ${op.path} failed: test failed`)
        break
    }
    await slice.pause()
  }
  // Values added at depth can nest the result deeper than any one body could.
  if (await runInSlices(depthWalk(doc.root), slice)) throw unprocessable(depthMessage())
  return doc.separate(slice)
}
