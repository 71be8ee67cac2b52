/**
 * The document a JSON patch works on, copied on write. Values the patch
 * must not change (the current object, an operation's value, the source of
 * a `copy`) go in by reference and are marked shared; an operation that
 * changes something beneath a shared node first puts a shallow copy in its
 * place, whose children are shared in turn. A `copy` of megabytes thus
 * costs nothing until the patch has succeeded: a patch that doubles the
 * document by copies is refused for its size without a copy made, where
 * cloning each one allocated hundreds of megabytes. `separate()` gives the
 * result a value of its own at the end, in one pass.
 *
 * Keys are a node's own fields only: `__proto__` or `toString` in a
 * pointer name a field the document may hold, never the object's prototype.
 */
import { isPlainObject } from '../machinery/object.js'
import { StatusError } from '../machinery/status-error.js'
import type { TimeSlice } from '../machinery/time-slice.js'

export type Container = Record<string, unknown> | unknown[]

/**
 * A JSON patch that could not be applied, in the words of upstream's patch
 * library. A webhook's patch reports them; a PATCH request's answer does
 * not (requestRejected).
 */
export class JsonPatchFailure extends StatusError {
  constructor(message: string) {
    super(422, 'Invalid', message)
  }
}

export function unprocessable(message: string): JsonPatchFailure {
  return new JsonPatchFailure(message)
}

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null
}

/** Sets a field as JSON.parse would: `__proto__` an own field, not the prototype. */
export function setField(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

/**
 * A pointer's tokens as json-patch v4 (upstream's patch library) reads
 * them: split at every `/`, the first piece set aside whatever it holds
 * (`a/b` names `b` at the root), `~1` and `~0` decoded. Undefined for a
 * pointer with no `/`, which finds nothing.
 */
function pointerTokens(pointer: string): string[] | undefined {
  const pieces = pointer.split('/')
  if (pieces.length < 2) return undefined
  return pieces.slice(1).map((t) => t.replace(/~1|~0/g, (escape) => (escape === '~1' ? '/' : '~')))
}

/** Go's strconv.Atoi of an array token: the index, or the error text Go gives. */
function atoi(token: string): number | string {
  if (!/^[+-]?[0-9]+$/.test(token)) return `strconv.Atoi: parsing ${JSON.stringify(token)}: invalid syntax`
  const n = BigInt(token)
  if (n > 9223372036854775807n || n < -9223372036854775808n) return `strconv.Atoi: parsing ${JSON.stringify(token)}: value out of range`
  return Number(n)
}

const invalidIndex = (i: number) => `Unable to access invalid index: ${i}: invalid index referenced`

/**
 * An index into an array of `length` items, negative ones counted from the
 * end (json-patch v4 takes them); `insert` allows the position after the
 * last. Throws the library's words.
 */
function arrayIndex(token: string, length: number, insert: boolean): number {
  const n = atoi(token)
  if (typeof n === 'string') throw unprocessable(n)
  const size = insert ? length + 1 : length
  if (n >= size) throw unprocessable(invalidIndex(n))
  if (n < 0) {
    if (n < -size) throw unprocessable(invalidIndex(n))
    return n + size
  }
  return n
}

/** The error json-patch's operations wrap around what failed beneath them: `what: cause`. */
function wrapped(what: string, err: unknown): JsonPatchFailure {
  return unprocessable(`${what}: ${err instanceof Error ? err.message : String(err)}`)
}

/** A copy of JSON data made without recursion, pausing when the slice is spent (a copy may hold a million nodes). */
export async function cloneInSlices(value: unknown, slice: TimeSlice): Promise<unknown> {
  if (!isContainer(value)) return value
  const copyOf = (node: object): Container => (Array.isArray(node) ? [] : {})
  const root = copyOf(value)
  // Two stacks side by side rather than a pair per node, and keys read by index rather than
  // as entries: a copy of a million nodes would otherwise allocate as many arrays again.
  const sources: object[] = [value]
  const targets: Container[] = [root]
  const copyChild = (child: unknown): unknown => {
    if (!isContainer(child)) return child
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
      const from = source as Record<string, unknown>
      const keys = Object.keys(from)
      for (let i = 0; i < keys.length; i++) setField(target as Record<string, unknown>, keys[i]!, copyChild(from[keys[i]!]))
    }
    if (visited % 1024 === 0) await slice.pause()
  }
  return root
}

export class PatchDocument {
  private readonly shared = new WeakSet<object>()

  constructor(public root: unknown) {
    this.share(root)
  }

  /** Marks a value the patch must leave as it is; returns it. */
  share<T>(value: T): T {
    if (isContainer(value)) this.shared.add(value)
    return value
  }

  isShared(value: object): boolean {
    return this.shared.has(value)
  }

  /** `node` itself when the patch may change it, else a shallow copy with its children shared. */
  private own(node: Container): Container {
    if (!this.shared.has(node)) return node
    if (Array.isArray(node)) {
      const copy = node.slice()
      for (let i = 0; i < copy.length; i++) this.share(copy[i])
      return copy
    }
    const copy: Record<string, unknown> = {}
    const keys = Object.keys(node)
    for (let i = 0; i < keys.length; i++) setField(copy, keys[i]!, this.share(node[keys[i]!]))
    return copy
  }

  /**
   * The container holding the pointer's last token, and that token, found
   * as json-patch v4's findObject finds them: every step must exist and not
   * be null, and the last must be an object or an array. With `write` each
   * shared node on the way is copied first, so the container may change.
   */
  locate(pointer: string, write: boolean): { parent: Container; key: string } | undefined {
    const tokens = pointerTokens(pointer)
    if (!tokens) return undefined
    const key = tokens.pop()!
    let node = this.root
    if (write && isContainer(node)) node = this.root = this.own(node)
    for (const t of tokens) {
      let next: unknown
      if (Array.isArray(node)) {
        const n = atoi(t)
        const i = typeof n === 'number' && n < 0 ? n + node.length : n
        if (typeof i !== 'number' || i < 0 || i >= node.length) return undefined
        next = node[i]
        if (write && isContainer(next)) next = node[i] = this.own(next)
      } else if (isPlainObject(node) && Object.hasOwn(node, t)) {
        next = node[t]
        if (write && isContainer(next)) {
          next = this.own(next)
          setField(node, t, next)
        }
      } else {
        return undefined
      }
      if (next === null || next === undefined) return undefined
      node = next
    }
    return isContainer(node) ? { parent: node, key } : undefined
  }

  /**
   * What `key` holds in `parent`: an object's missing field and its null
   * alike read as undefined (the library decodes null to nothing); an
   * array's index must be within it.
   */
  read(parent: Container, key: string): unknown {
    if (Array.isArray(parent)) return parent[arrayIndex(key, parent.length, false)]
    const value = Object.hasOwn(parent, key) ? parent[key] : undefined
    return value === null ? undefined : value
  }

  /** Sets an object's field, or inserts into an array (`-` appends). */
  insert(parent: Container, key: string, value: unknown): void {
    if (!Array.isArray(parent)) return setField(parent, key, value)
    if (key === '-') {
      parent.push(value)
      return
    }
    const n = atoi(key)
    if (typeof n === 'string') throw unprocessable(`value was not a proper array index: '${key}': ${n}`)
    parent.splice(arrayIndex(key, parent.length, true), 0, value)
  }

  /** Sets an object's field, or replaces an array's item (whose index was read before). */
  set(parent: Container, key: string, value: unknown): void {
    if (Array.isArray(parent)) parent[arrayIndex(key, parent.length, false)] = value
    else setField(parent, key, value)
  }

  /** Removes an object's field (which must be there, null or not) or an array's item. */
  delete(parent: Container, key: string): void {
    if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, false), 1)
    else if (Object.hasOwn(parent, key)) delete parent[key]
    else throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`)
  }

  /** `fn`'s failure as json-patch's `what: cause`. */
  static within<T>(what: string, fn: () => T): T {
    try {
      return fn()
    } catch (err) {
      throw wrapped(what, err)
    }
  }

  /**
   * The result as a value of its own: each shared node still in it (the
   * current object's untouched parts, operations' values, copies, each
   * place a copy went) replaced by a deep copy, in slices.
   */
  async separate(slice: TimeSlice): Promise<unknown> {
    const root = this.root
    if (!isContainer(root)) return root
    if (this.shared.has(root)) return cloneInSlices(root, slice)
    // Nodes not shared are the patch's own copies: each sits in one place only.
    const pending: Container[] = [root]
    while (pending.length > 0) {
      const node = pending.pop()!
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const child = node[i]
          if (!isContainer(child)) continue
          if (this.shared.has(child)) node[i] = await cloneInSlices(child, slice)
          else pending.push(child)
        }
      } else {
        const keys = Object.keys(node)
        for (let i = 0; i < keys.length; i++) {
          const child = node[keys[i]!]
          if (!isContainer(child)) continue
          if (this.shared.has(child)) setField(node, keys[i]!, await cloneInSlices(child, slice))
          else pending.push(child)
        }
      }
      await slice.pause()
    }
    return root
  }
}
