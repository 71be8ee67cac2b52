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

export function unprocessable(message: string): StatusError {
  return new StatusError(422, 'Invalid', message)
}

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null
}

/** Sets a field as JSON.parse would: `__proto__` an own field, not the prototype. */
export function setField(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

export function decodePointer(pointer: string): string[] {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw unprocessable(`invalid JSON pointer: ${JSON.stringify(pointer)}`)
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
}

export function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === '-') return length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw unprocessable(`invalid array index: ${token}`)
  const i = Number(token)
  if (i > length || (!forInsert && i === length)) throw unprocessable(`array index out of bounds: ${i}`)
  return i
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

  /** The value at `pointer`, read only. */
  get(pointer: string): unknown {
    let node = this.root
    for (const t of decodePointer(pointer)) {
      if (Array.isArray(node)) node = node[arrayIndex(t, node.length, false)]
      else if (isPlainObject(node) && Object.hasOwn(node, t)) node = node[t]
      else throw unprocessable(`doc is missing path: "${pointer}": missing value`)
    }
    return node
  }

  /** Walks to the parent of the pointer's last token, copying each shared node on the way: the parent may then be changed. */
  private parentOf(pointer: string): { parent: Container; key: string } {
    const tokens = decodePointer(pointer)
    const key = tokens.pop()
    if (key === undefined) throw unprocessable('the root of the document cannot be the target')
    let node = this.root
    if (isContainer(node)) node = this.root = this.own(node)
    for (const t of tokens) {
      let next: unknown
      if (Array.isArray(node)) {
        const i = arrayIndex(t, node.length, false)
        next = node[i]
        if (isContainer(next)) next = node[i] = this.own(next)
      } else if (isPlainObject(node) && Object.hasOwn(node, t)) {
        next = node[t]
        if (isContainer(next)) {
          next = this.own(next)
          setField(node, t, next)
        }
      } else {
        throw unprocessable(`doc is missing path: "${pointer}": missing value`)
      }
      node = next
    }
    if (!isContainer(node)) throw unprocessable(`doc is missing path: "${pointer}": missing value`)
    return { parent: node, key }
  }

  add(pointer: string, value: unknown): void {
    if (pointer === '') {
      this.root = value
      return
    }
    const { parent, key } = this.parentOf(pointer)
    if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, true), 0, value)
    else setField(parent, key, value)
  }

  remove(pointer: string): void {
    const { parent, key } = this.parentOf(pointer)
    if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, false), 1)
    else if (Object.hasOwn(parent, key)) delete parent[key]
    else throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`)
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
