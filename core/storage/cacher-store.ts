/**
 * What one resource's watch cache holds (upstream's watchCache): the current
 * objects in key order, and a bounded window of the latest changes that
 * watches from a recent resourceVersion replay. Every object held here is
 * deep-frozen and shared; whoever hands one out clones it first.
 */
import type { KubeObject } from '../machinery/object.js'
import { lowerBound } from './sorted-keys.js'

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
  /** Sorted: the keys placed in order. Keys added since the last scan wait in `added`. */
  private keys: string[] = []
  /** The objects in the order of `keys`, so that a scan reads them without a lookup each. */
  private objects: KubeObject[] = []
  /**
   * Keys added since the last scan, placed by the next one in one merge. A
   * splice into the sorted arrays per create moved half of them each time:
   * some 6 µs a create with 15,000 objects cached.
   */
  private readonly added = new Set<string>()

  get size(): number {
    return this.byKey.size
  }

  get(key: string): KubeObject | undefined {
    return this.byKey.get(key)
  }

  /** Every object, in no particular order. */
  values(): IterableIterator<KubeObject> {
    return this.byKey.values()
  }

  set(key: string, obj: KubeObject): void {
    if (!this.byKey.has(key)) this.added.add(key)
    else if (!this.added.has(key)) this.objects[lowerBound(this.keys, key)] = obj
    this.byKey.set(key, obj)
  }

  delete(key: string): void {
    if (!this.byKey.delete(key)) return
    if (this.added.delete(key)) return
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
    this.placeAdded()
    const { keys, objects } = this
    // In key order, the keys under `prefix` are exactly those from `prefix` up to the first key past them.
    const from = lowerBound(keys, prefix)
    const to = lowerBound(keys, pastPrefix(prefix), from)
    if (!keep) return objects.slice(from, to)
    const out: KubeObject[] = []
    for (let i = from; i < to; i++) {
      const obj = objects[i]!
      if (keep(obj)) out.push(obj)
    }
    return out
  }

  /** Merges the keys added since the last scan into the sorted arrays (sort compares as `<` does: by UTF-16 code units). */
  private placeAdded(): void {
    if (this.added.size === 0) return
    const fresh = [...this.added].sort()
    this.added.clear()
    const keys: string[] = new Array<string>(this.keys.length + fresh.length)
    const objects: KubeObject[] = new Array<KubeObject>(keys.length)
    let i = 0
    let j = 0
    for (let out = 0; out < keys.length; out++) {
      if (j >= fresh.length || (i < this.keys.length && this.keys[i]! < fresh[j]!)) {
        keys[out] = this.keys[i]!
        objects[out] = this.objects[i++]!
      } else {
        const key = fresh[j++]!
        keys[out] = key
        objects[out] = this.byKey.get(key)!
      }
    }
    this.keys = keys
    this.objects = objects
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

/**
 * The least string above every string that starts with `prefix` (one ending
 * in `/`, as a collection's): the prefix with its last code unit one higher,
 * `/` becoming `0`.
 */
function pastPrefix(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)
}
