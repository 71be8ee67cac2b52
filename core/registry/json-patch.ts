/**
 * JSON merge patch (RFC 7386) and JSON patch (RFC 6902, including `test`),
 * applied to plain JSON data. Failures are reported as upstream reports them:
 * a patch document that cannot be read is 400, one that cannot be applied 422.
 */
import { depthMessage, depthWalk, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS } from '../machinery/limits.js'
import { badRequest, requestEntityTooLarge, StatusError } from '../machinery/status-error.js'
import { runInSlices, TimeSlice } from '../machinery/time-slice.js'
import { jsonBytes } from './json-size.js'
import { isPlainObject } from '../machinery/object.js'

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch)
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

type Operation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string }

function unprocessable(message: string): StatusError {
  return new StatusError(422, 'Invalid', message)
}

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

function decodePointer(pointer: string): string[] {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw unprocessable(`invalid JSON pointer: ${JSON.stringify(pointer)}`)
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === '-') return length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw unprocessable(`invalid array index: ${token}`)
  const i = Number(token)
  if (i > length || (!forInsert && i === length)) throw unprocessable(`array index out of bounds: ${i}`)
  return i
}

type Container = Record<string, unknown> | unknown[]

/** Walks to the parent of the pointer's last token. */
function resolveParent(doc: unknown, pointer: string): { parent: Container; key: string } {
  const tokens = decodePointer(pointer)
  const key = tokens.pop()
  if (key === undefined) throw unprocessable('the root of the document cannot be the target')
  let node = doc
  for (const t of tokens) {
    if (Array.isArray(node)) node = node[arrayIndex(t, node.length, false)]
    else if (isPlainObject(node) && t in node) node = node[t]
    else throw unprocessable(`doc is missing path: "${pointer}": missing value`)
  }
  if (!Array.isArray(node) && !isPlainObject(node)) throw unprocessable(`doc is missing path: "${pointer}": missing value`)
  return { parent: node, key }
}

function getAt(doc: unknown, pointer: string): unknown {
  let node = doc
  for (const t of decodePointer(pointer)) {
    if (Array.isArray(node)) node = node[arrayIndex(t, node.length, false)]
    else if (isPlainObject(node) && t in node) node = node[t]
    else throw unprocessable(`doc is missing path: "${pointer}": missing value`)
  }
  return node
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value
  const { parent, key } = resolveParent(doc, pointer)
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, true), 0, value)
  else parent[key] = value
  return doc
}

function remove(doc: unknown, pointer: string): unknown {
  const { parent, key } = resolveParent(doc, pointer)
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, false), 1)
  else if (key in parent) delete parent[key]
  else throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`)
  return doc
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]))
  }
  return false
}

/**
 * A copy of JSON data made without recursion, pausing when the slice is
 * spent: a copy may hold up to JSON_PATCH_MAX_COPY_BYTES of small nodes,
 * about a million, too many to clone in one piece while others wait.
 */
async function cloneInSlices(value: unknown, slice: TimeSlice): Promise<unknown> {
  if (value === null || typeof value !== 'object') return value
  const copyOf = (node: object): Record<string, unknown> | unknown[] => (Array.isArray(node) ? [] : {})
  const root = copyOf(value)
  // Two stacks side by side rather than a pair per node, and keys read by index rather than
  // as entries: a copy of a million nodes would otherwise allocate as many arrays again.
  const sources: object[] = [value]
  const targets: Array<Record<string, unknown> | unknown[]> = [root]
  const copyChild = (child: unknown): unknown => {
    if (child === null || typeof child !== 'object') return child
    const copy = copyOf(child)
    sources.push(child)
    targets.push(copy)
    return copy
  }
  for (let visited = 1; sources.length > 0; visited++) {
    const source = sources.pop()!
    const target = targets.pop()!
    if (Array.isArray(source)) {
      const into = target as unknown[]
      for (let i = 0; i < source.length; i++) into.push(copyChild(source[i]))
    } else {
      const into = target as Record<string, unknown>
      const keys = Object.keys(source)
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!
        const copy = copyChild((source as Record<string, unknown>)[key])
        if (key !== '__proto__') into[key] = copy
        else Object.defineProperty(into, key, { value: copy, writable: true, enumerable: true, configurable: true })
      }
    }
    if (visited % 1024 === 0) await slice.pause()
  }
  return root
}

/**
 * Applies RFC 6902 operations to a copy of `target`. What `copy` operations
 * add is counted against upstream's budget (each could double the document),
 * and the result may nest no deeper than a decoded body. Operations run one
 * by one in time slices, so a patch that copies megabytes leaves other
 * requests served meanwhile.
 */
export async function applyJsonPatch(target: unknown, ops: Operation[], maxCopyBytes = JSON_PATCH_MAX_COPY_BYTES): Promise<unknown> {
  const slice = new TimeSlice()
  let doc = await cloneInSlices(target, slice)
  let copied = 0
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, await cloneInSlices(op.value, slice))
        break
      case 'remove':
        doc = remove(doc, op.path)
        break
      case 'replace': {
        getAt(doc, op.path)
        const value = await cloneInSlices(op.value, slice)
        doc = op.path === '' ? value : add(remove(doc, op.path), op.path, value)
        break
      }
      case 'move': {
        const value = getAt(doc, op.from)
        doc = add(remove(doc, op.from), op.path, value)
        break
      }
      case 'copy': {
        const value = getAt(doc, op.from)
        // The bytes the value adds as JSON text, measured in slices: it may be megabytes.
        copied += await runInSlices(jsonBytes(value), slice)
        if (copied > maxCopyBytes)
          throw unprocessable(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxCopyBytes}`)
        doc = add(doc, op.path, await cloneInSlices(value, slice))
        break
      }
      case 'test':
        if (!deepEqual(getAt(doc, op.path), op.value))
          throw unprocessable(`testing value ${op.path} failed: test failed`)
        break
    }
    await slice.pause()
  }
  // Values added at depth can nest the result deeper than any one body could.
  if (await runInSlices(depthWalk(doc), slice)) throw unprocessable(depthMessage())
  return doc
}
