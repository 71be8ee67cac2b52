/**
 * The objects this process is writing or wrote last, each under its key with
 * the bytes sent to etcd, for the watch event that reports the write: the
 * event carries those very bytes, so a copy of the object decoded for the
 * write's answer stands in for decoding them again. A copy costs a fraction
 * of a decode, and a starting server writes some two hundred objects that
 * its watch caches hear of at once.
 *
 * The object is kept before the write is sent, and the event is matched by
 * its bytes, not by the revision the answer brings: on one connection to
 * etcd the event often arrives before the write's answer, and then the
 * revision is not known yet. Equal bytes decode to an equal object, so the
 * match is exact whichever write of the key the event reports.
 *
 * An object is given out once (its taker keeps it); one that no watch takes
 * (no watch on its range, a refused write, a superseded one) is let go
 * first in, first out, within a small budget of bytes.
 */
import { cloneJson, type KubeObject } from '../../../core/machinery/object.js'
import { stampRevision } from '../../../core/storage/objects.js'

interface Written {
  /** The value sent to etcd (after the transformer): what the event will carry. */
  stored: Uint8Array
  object: KubeObject
  /** etcd's revision of the write, once its answer came. */
  revision: number | undefined
  bytes: number
}

/** Enough for the writes in flight at once, many times over: a watch takes an object within milliseconds. */
const DEFAULT_BUDGET_BYTES = 256 * 1024

export class RecentWrites {
  private readonly written = new Map<string, Written>()
  private bytes = 0

  constructor(private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {}

  /**
   * Before a write of `stored` to `key` is sent: `object` is what it decodes
   * to (`bytes`: its encoded size). A copy is kept; the caller keeps its own.
   */
  sending(key: string, stored: Uint8Array, object: KubeObject, bytes: number): void {
    this.drop(key)
    if (bytes > this.budgetBytes) return
    this.written.set(key, { stored, object: cloneJson(object), revision: undefined, bytes })
    this.bytes += bytes
    // Only when over budget: a walk from the map's start passes every entry deleted since its last
    // rehash, some hundred under load, which cost 18 µs a write when it ran on every one.
    if (this.bytes <= this.budgetBytes) return
    for (const [oldest] of this.written) {
      if (this.bytes <= this.budgetBytes) break
      this.drop(oldest)
    }
  }

  /** The write of `stored` succeeded at `revision`. */
  succeeded(key: string, stored: Uint8Array, revision: number): void {
    const written = this.written.get(key)
    if (written?.stored === stored) written.revision = revision
  }

  /** The write of `stored` was refused or failed: no event will carry it. */
  failed(key: string, stored: Uint8Array): void {
    if (this.written.get(key)?.stored === stored) this.drop(key)
  }

  /**
   * The object the event of `value` at `key` reports, stamped with the
   * event's `revision`, once; undefined when this process did not just
   * write those bytes there.
   */
  take(key: string, value: Uint8Array, revision: number): KubeObject | undefined {
    const written = this.written.get(key)
    if (!written || !sameBytes(written.stored, value)) return undefined
    this.drop(key)
    return stampRevision(written.object, revision)
  }

  /**
   * The object last written at `key`, when its write succeeded at a revision
   * newer than `revision`, without giving it away: the caller only reads it.
   * An update that starts from the watch cache's copy takes it instead when
   * the cache has not yet heard of this process's own last write of the key
   * (a client updating one object again and again), so the guess is not
   * known to be old.
   */
  newerThan(key: string, revision: number): KubeObject | undefined {
    const written = this.written.get(key)
    return written?.revision !== undefined && written.revision > revision ? stampRevision(written.object, written.revision) : undefined
  }

  private drop(key: string): void {
    const written = this.written.get(key)
    if (!written) return
    this.written.delete(key)
    this.bytes -= written.bytes
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0
}
