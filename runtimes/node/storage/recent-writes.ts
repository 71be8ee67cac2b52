/**
 * The objects this process wrote last, each under its key and the revision
 * etcd gave the write, for the watch event that reports the write a moment
 * later: the event carries the very bytes that were written, so a copy of
 * the object decoded for the write's answer stands in for decoding them
 * again. A copy costs a fraction of a decode, and a starting server writes
 * some two hundred objects that its watch caches hear of at once.
 *
 * An object is given out once (its taker keeps it); one that no watch takes
 * (no watch on its range, or the write was superseded) is let go first in,
 * first out, within a small budget of bytes.
 */
import type { KubeObject } from '../../../core/machinery/object.js'

interface Written {
  revision: number
  object: KubeObject
  bytes: number
}

/** Enough for the writes in flight at once, many times over: a watch takes an object within milliseconds. */
const DEFAULT_BUDGET_BYTES = 256 * 1024

export class RecentWrites {
  private readonly written = new Map<string, Written>()
  private bytes = 0

  constructor(private readonly budgetBytes = DEFAULT_BUDGET_BYTES) {}

  /** `object` as written at `revision` (`bytes`: its encoded size); a copy is kept, the caller keeps its own. */
  remember(key: string, revision: number, object: KubeObject, bytes: number): void {
    this.drop(key)
    if (bytes > this.budgetBytes) return
    this.written.set(key, { revision, object: structuredClone(object), bytes })
    this.bytes += bytes
    for (const [oldest] of this.written) {
      if (this.bytes <= this.budgetBytes) break
      this.drop(oldest)
    }
  }

  /** The object written at `key` at exactly `revision`, once; undefined when it is not kept. */
  take(key: string, revision: number): KubeObject | undefined {
    const written = this.written.get(key)
    if (!written || written.revision !== revision) return undefined
    this.drop(key)
    return written.object
  }

  /**
   * The object last written at `key`, when it is newer than `revision`,
   * without giving it away: the caller only reads it. An update that starts
   * from the watch cache's copy takes it instead when the cache has not yet
   * heard of this process's own last write of the key (a client updating
   * one object again and again), so the guess is not known to be old.
   */
  newerThan(key: string, revision: number): KubeObject | undefined {
    const written = this.written.get(key)
    return written && written.revision > revision ? written.object : undefined
  }

  private drop(key: string): void {
    const written = this.written.get(key)
    if (!written) return
    this.written.delete(key)
    this.bytes -= written.bytes
  }
}
