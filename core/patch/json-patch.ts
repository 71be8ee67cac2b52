/**
 * JSON merge patch (RFC 7386) and JSON patch (RFC 6902, including `test`),
 * applied to plain JSON data. Failures are reported as upstream reports them:
 * a patch document that cannot be read is 400, one that cannot be applied 422.
 */
import { depthMessage, depthWalk, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS } from '../machinery/limits.js'
import { badRequest, requestEntityTooLarge, StatusError } from '../machinery/status-error.js'
import { goJsonKind } from '../machinery/go-format.js'
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

/**
 * One operation as sent: read field by field only as it runs, as upstream's
 * patch library (json-patch v4) reads it, so that an operation it cannot
 * run fails there, after those before it. Null is an operation of no kind.
 */
export type JsonPatchOperation = Record<string, unknown> | null

/** The first value in `doc` that upstream's strict decoding into its operation type refuses, in its words. */
function strictDecodingError(doc: unknown[]): string | undefined {
  for (const raw of doc) {
    if (raw === null) continue
    if (!isPlainObject(raw)) return `json: cannot unmarshal ${goJsonKind(raw)} into Go value of type handlers.jsonPatchOp`
    for (const [field, value] of Object.entries(raw)) {
      if ((field === 'op' || field === 'path' || field === 'from') && value !== null && typeof value !== 'string')
        return `json: cannot unmarshal ${goJsonKind(value)} into Go struct field jsonPatchOp.${field} of type string`
    }
  }
  return undefined
}

/**
 * Reads an RFC 6902 document as upstream does: null is no operation; more
 * than 10000 operations are 413. `strict` is a PATCH request's decoding
 * (every field validation but Ignore): the operations' fields checked for
 * their types first, refused as "error decoding patch". Without it (a
 * webhook's or a policy's patch) only the document's shape is checked.
 */
export function parseJsonPatch(doc: unknown, strict = false): JsonPatchOperation[] {
  if (doc === null) return []
  if (!Array.isArray(doc)) {
    throw badRequest(
      strict
        ? `error decoding patch: json: cannot unmarshal ${goJsonKind(doc)} into Go value of type []handlers.jsonPatchOp`
        : `json: cannot unmarshal ${goJsonKind(doc)} into Go value of type jsonpatch.Patch`,
    )
  }
  const refused = strict ? strictDecodingError(doc) : undefined
  if (refused) throw badRequest(`error decoding patch: ${refused}`)
  const notAnObject = doc.find((raw) => raw !== null && !isPlainObject(raw))
  if (notAnObject !== undefined) throw badRequest(`json: cannot unmarshal ${goJsonKind(notAnObject)} into Go value of type jsonpatch.Operation`)
  if (doc.length > MAX_JSON_PATCH_OPERATIONS)
    throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${doc.length}`)
  return doc as JsonPatchOperation[]
}

/** An operation's `path` or `from`: its text, or what the library says when it has none. */
function pointerField(op: JsonPatchOperation, field: 'path' | 'from'): string {
  const value = op?.[field]
  if (value === undefined || value === null) throw unprocessable(field === 'path' ? 'operation missing path field: missing value' : 'operation, missing from field: missing value')
  if (typeof value !== 'string') throw unprocessable(`json: cannot unmarshal ${goJsonKind(value)} into Go value of type string`)
  return value
}

/** An operation's `value`: `{ value }` when it has one (null included), undefined when it has none. */
function valueField(op: JsonPatchOperation): { value: unknown } | undefined {
  return op && Object.hasOwn(op, 'value') ? { value: op['value'] } : undefined
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

/** A value json-patch treats as none: an absent one, or null. */
const isNone = (v: unknown) => v === undefined || v === null

/**
 * Applies RFC 6902 operations to `target`, which stays as it is (see
 * json-patch-document.ts: nothing is copied until the patch has
 * succeeded), with the rules of upstream's patch library, json-patch v4,
 * where they leave the RFC: a `replace` of a missing field adds it, an
 * operation with no value writes null, a `copy` from a missing field copies
 * null, a `test` of a missing field against null passes, negative array
 * indexes count from the end, and a pointer's text before its first `/` is
 * set aside. A failure is a JsonPatchFailure in the library's words. What
 * `copy` operations add is counted against upstream's budget (each could
 * double the document), and the result may nest no deeper than a decoded
 * body. Operations run one by one in time slices.
 */
export async function applyJsonPatch(target: unknown, ops: JsonPatchOperation[], maxCopyBytes = JSON_PATCH_MAX_COPY_BYTES): Promise<unknown> {
  const slice = new TimeSlice()
  const doc = new PatchDocument(target)
  // The JSON size of each copied value: shared, it never changes, so a copy of copies is measured once.
  const sizes = new WeakMap<object, number>()
  let copied = 0
  for (const op of ops) {
    const kind = typeof op?.['op'] === 'string' ? op['op'] : 'unknown'
    switch (kind) {
      case 'add': {
        const path = PatchDocument.within('add operation failed to decode path', () => pointerField(op, 'path'))
        const at = doc.locate(path, true)
        if (!at) throw unprocessable(`add operation does not apply: doc is missing path: "${path}": missing value`)
        PatchDocument.within(`error in add for path: '${path}'`, () => doc.insert(at.parent, at.key, doc.share(valueField(op)?.value ?? null)))
        break
      }
      case 'remove': {
        const path = PatchDocument.within('remove operation failed to decode path', () => pointerField(op, 'path'))
        const at = doc.locate(path, true)
        if (!at) throw unprocessable(`remove operation does not apply: doc is missing path: "${path}": missing value`)
        PatchDocument.within(`error in remove for path: '${path}'`, () => doc.delete(at.parent, at.key))
        break
      }
      case 'replace': {
        const path = PatchDocument.within('replace operation failed to decode path', () => pointerField(op, 'path'))
        const value = valueField(op)?.value ?? null
        if (path === '') {
          // The whole document, by an object or an array; the library lets any other value pass unapplied.
          if (value !== null && typeof value === 'object') doc.root = doc.share(value)
          break
        }
        const at = doc.locate(path, true)
        if (!at) throw unprocessable(`replace operation does not apply: doc is missing path: ${path}: missing value`)
        PatchDocument.within(`replace operation does not apply: doc is missing key: ${path}`, () => doc.read(at.parent, at.key))
        doc.set(at.parent, at.key, doc.share(value))
        break
      }
      case 'move': {
        const from = PatchDocument.within('move operation failed to decode from', () => pointerField(op, 'from'))
        const source = doc.locate(from, true)
        if (!source) throw unprocessable(`move operation does not apply: doc is missing from path: ${from}: missing value`)
        const value = PatchDocument.within(`error in move for path: '${source.key}'`, () => doc.read(source.parent, source.key))
        PatchDocument.within(`error in move for path: '${source.key}'`, () => doc.delete(source.parent, source.key))
        const path = PatchDocument.within('move operation failed to decode path', () => pointerField(op, 'path'))
        const at = doc.locate(path, true)
        if (!at) throw unprocessable(`move operation does not apply: doc is missing destination path: ${path}: missing value`)
        PatchDocument.within(`error in move for path: '${path}'`, () => doc.insert(at.parent, at.key, value ?? null))
        break
      }
      case 'copy': {
        const from = PatchDocument.within('copy operation failed to decode from', () => pointerField(op, 'from'))
        const source = doc.locate(from, false)
        if (!source) throw unprocessable(`copy operation does not apply: doc is missing from path: ${from}: missing value`)
        const found = PatchDocument.within(`error in copy for from: '${from}'`, () => doc.read(source.parent, source.key))
        const path = PatchDocument.within('copy operation failed to decode path', () => pointerField(op, 'path'))
        const at = doc.locate(path, true)
        if (!at) throw unprocessable(`copy operation does not apply: doc is missing destination path: ${path}: missing value`)
        const value = doc.share(found ?? null)
        if (found !== undefined) {
          // The bytes the value adds as JSON text, measured in slices: it may be megabytes.
          const bytes = await runInSlices(jsonBytes(value, (node) => sizes.get(node)), slice)
          if (value !== null && typeof value === 'object') sizes.set(value, bytes)
          copied += bytes
        }
        if (copied > maxCopyBytes)
          throw unprocessable(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxCopyBytes}`)
        PatchDocument.within('error while adding value during copy', () => doc.insert(at.parent, at.key, value))
        break
      }
      case 'test': {
        const path = PatchDocument.within('test operation failed to decode path', () => pointerField(op, 'path'))
        const expected = valueField(op)
        let actual: unknown
        if (path === '') actual = doc.root
        else {
          const at = doc.locate(path, false)
          if (!at) throw unprocessable(`test operation does not apply: is missing path: ${path}: missing value`)
          actual = PatchDocument.within(`error in test for path: '${path}'`, () => doc.read(at.parent, at.key))
        }
        const passed = expected !== undefined && (isNone(actual) ? expected.value === null : deepEqual(actual, expected.value))
        if (!passed) throw unprocessable(`testing value ${path} failed: test failed`)
        break
      }
      default:
        throw unprocessable(`Unexpected kind: ${kind}`)
    }
    await slice.pause()
  }
  // Values added at depth can nest the result deeper than any one body could.
  if (await runInSlices(depthWalk(doc.root), slice)) throw new StatusError(422, 'Invalid', depthMessage())
  return doc.separate(slice)
}
