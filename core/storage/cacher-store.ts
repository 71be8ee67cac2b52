/**
 * What one resource's watch cache holds (upstream's watchCache): the current
 * objects in key order, and a bounded window of the latest changes that
 * watches from a recent resourceVersion replay. Every object held here is
 * deep-frozen and shared; whoever hands one out clones it first.
 */
import type { KubeObject } from '../machinery/object.js'

/** One change as the cache saw it, with the state before it for predicate transitions. */
export interface CachedChange {
  key: string
  /** The new state; for a deletion, the last state stamped with the deletion's revision. */
  object: KubeObject
  /** The cached state before the change; undefined when the key was not cached. */
  previous: KubeObject | undefined
  deleted: boolean
  revision: number
}

/** The objects of one resource by key, kept in key order for prefix scans. */
export class ObjectIndex {
  private readonly byKey = new Map<string, KubeObject>()
  /** Sorted; insertion is a binary search and one splice. */
  private readonly keys: string[] = []
  /** The objects in the order of `keys`, so that a scan reads them without a lookup each. */
  private readonly objects: KubeObject[] = []

  get size(): number {
    return this.byKey.size
  }

  get(key: string): KubeObject | undefined {
    return this.byKey.get(key)
  }

  set(key: string, obj: KubeObject): void {
    const at = lowerBound(this.keys, key)
    if (this.byKey.has(key)) this.objects[at] = obj
    else {
      this.keys.splice(at, 0, key)
      this.objects.splice(at, 0, obj)
    }
    this.byKey.set(key, obj)
  }

  delete(key: string): void {
    if (!this.byKey.delete(key)) return
    const at = lowerBound(this.keys, key)
    if (this.keys[at] === key) {
      this.keys.splice(at, 1)
      this.objects.splice(at, 1)
    }
  }

  /**
   * The objects whose keys start with `prefix` (or equal `prefix` when it
   * does not end in `/`), in key order, those `keep` refuses left out; one
   * array, with no lookup or generator step per object.
   */
  matching(prefix: string, keep?: (obj: KubeObject) => boolean): KubeObject[] {
    if (!prefix.endsWith('/')) {
      const only = this.byKey.get(prefix)
      return only && (!keep || keep(only)) ? [only] : []
    }
    const out: KubeObject[] = []
    const { keys, objects } = this
    for (let i = lowerBound(keys, prefix); i < keys.length; i++) {
      if (!keys[i]!.startsWith(prefix)) break
      const obj = objects[i]!
      if (!keep || keep(obj)) out.push(obj)
    }
    return out
  }

  /** True when both hold the same keys at the same resourceVersions. */
  sameAs(other: ObjectIndex): boolean {
    if (other.size !== this.size) return false
    for (const [key, obj] of this.byKey) {
      if (other.get(key)?.metadata.resourceVersion !== obj.metadata.resourceVersion) return false
    }
    return true
  }
}

/** The ring a window starts with: most resources see few changes, and every server has a window per resource. */
const FIRST_RING_SIZE = 16

/**
 * The latest changes, oldest first, in a ring of fixed capacity. As
 * upstream's window, it knows from which revision on it holds every change:
 * right after a (re)list that is the list's revision, and once the ring has
 * dropped a change, the revision just before its oldest one. The ring
 * grows to its capacity as changes come, not at once.
 */
export class EventWindow {
  private ring: Array<CachedChange | undefined>
  private start = 0
  private length = 0
  /** The revision of the last (re)list; every later change is in the window until one drops out. */
  private listRevision = 0
  private dropped = false

  constructor(readonly capacity: number) {
    this.ring = new Array<CachedChange | undefined>(Math.max(1, Math.min(capacity, FIRST_RING_SIZE)))
  }

  /** Empties the window after a list at `revision`: from there on it is complete again. */
  reset(revision: number): void {
    this.ring.fill(undefined)
    this.start = 0
    this.length = 0
    this.listRevision = revision
    this.dropped = false
  }

  push(change: CachedChange): void {
    if (this.length === this.ring.length && this.ring.length < this.capacity) this.grow()
    const size = this.ring.length
    if (this.length === size) {
      this.ring[this.start] = change
      this.start = (this.start + 1) % size
      this.dropped = true
      return
    }
    this.ring[(this.start + this.length) % size] = change
    this.length++
  }

  /** Forgets every change at or below `revision`, as a compaction of the backend does. */
  forgetUpTo(revision: number): void {
    while (this.length > 0 && this.at(0).revision <= revision) {
      this.ring[this.start] = undefined
      this.start = (this.start + 1) % this.ring.length
      this.length--
      this.dropped = true
    }
    if (this.length === 0 && revision > this.listRevision) {
      this.listRevision = revision
      this.dropped = false
    }
  }

  /**
   * The oldest revision a watch may start from: it then receives every
   * change after it. Upstream's `oldest - 1` in getAllEventsSinceLocked.
   */
  oldestStart(): number {
    if (!this.dropped || this.length === 0) return this.listRevision
    return this.at(0).revision - 1
  }

  /** The changes after `revision`, oldest first (a copy: later pushes do not show). */
  since(revision: number): CachedChange[] {
    let lo = 0
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.at(mid).revision <= revision) lo = mid + 1
      else hi = mid
    }
    const out: CachedChange[] = []
    for (let i = lo; i < this.length; i++) out.push(this.at(i))
    return out
  }

  /** Doubles the ring (up to the capacity), its changes moved to the front in order. */
  private grow(): void {
    const ring = new Array<CachedChange | undefined>(Math.min(this.capacity, this.ring.length * 2))
    for (let i = 0; i < this.length; i++) ring[i] = this.at(i)
    this.ring = ring
    this.start = 0
  }

  private at(i: number): CachedChange {
    return this.ring[(this.start + i) % this.ring.length]!
  }
}

/** The first index whose key is >= `target`. */
function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid]! < target) lo = mid + 1
    else hi = mid
  }
  return lo
}
