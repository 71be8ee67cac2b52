/**
 * Which revision a watch may claim in a BOOKMARK: one whose events, if any,
 * have all been delivered. Known for sure are the watch's start, its own
 * events (matching or not: etcd sends them in revision order) and etcd's
 * progress notifications for the watcher (`progress_notify`), which queue
 * behind its events.
 *
 * A quiet range needs more: the watch cache waits for BOOKMARKs to move on
 * when only other resources change. etcd's answer to a progress request
 * cannot be trusted before 3.4.25/3.5.8 (it may overtake events still queued
 * for the watcher, and a watcher starting in the past is caught up by a loop
 * that runs every 100ms), so a probe asks etcd itself, in one transaction at
 * the newest revision R: how many keys the range holds, and the highest
 * mod_revision among them. When no key changed after what was delivered and
 * the count equals the count the delivered events add up to, no key was
 * created, changed or deleted up to R, so R may be claimed, after one round
 * trip on the watch stream that lets anything already on its way arrive.
 *
 * The one change such a census cannot see is a key created and deleted in
 * between. If its events arrive after a BOOKMARK claimed their revision,
 * `eventArrived` says so and the watch ends with an error: its client lists
 * again instead of missing them.
 */

export interface Census {
  /** The revision etcd answered at. */
  revision: number
  /** Keys in the range at that revision. */
  keys: number
  /** The highest mod_revision among them (0 when empty). */
  newest: number
}

export interface ProgressSource {
  /** Keys in the watched range at `revision`. */
  countAt(revision: number): Promise<number>
  census(): Promise<Census>
  /** Sends a progress request on the watch stream; false when there is none. */
  requestProgress(): boolean
}

/** How long etcd may take to bring a watcher that starts in the past up to date (its sync loop runs every 100ms). */
const CATCH_UP_MS = 300

export type KeyChange = 'created' | 'changed' | 'deleted'

export class WatchProgress {
  /** Every event at or below this revision has been delivered (undefined until the start is known). */
  delivered: number | undefined
  /** A revision a census vouched for. */
  private confirmed = 0
  /** The highest revision a BOOKMARK claimed. */
  private claimed = 0
  /** Creations minus deletions among the events delivered so far. */
  private keysDelta = 0
  /** The range's key count at some point, and keysDelta at that point. */
  private keysAt: { keys: number; delta: number } | undefined
  /** While etcd may still be catching the watcher up, a census proves nothing. */
  private catchingUpUntil: { revision: number; time: number } | undefined
  private probing = false
  /** A vouched-for revision waiting for its round trip on the stream. */
  private flushing: number | undefined

  constructor(private readonly source: ProgressSource) {}

  /** Starts counting keys from a known count at the start (a snapshot's size). */
  startWith(keys: number): void {
    this.keysAt = { keys, delta: this.keysDelta }
  }

  /**
   * etcd created the watcher at `revision` (the created answer's header). A
   * watcher starting at or below it gets its first events from etcd's sync loop.
   */
  created(revision: number, now = Date.now()): void {
    const start = (this.delivered ?? 0) + 1
    this.catchingUpUntil = start <= revision ? { revision, time: now + CATCH_UP_MS } : undefined
  }

  /** An event delivered at `revision`; false when a BOOKMARK already claimed that revision. */
  eventArrived(revision: number, change: KeyChange): boolean {
    if (change === 'created') this.keysDelta++
    else if (change === 'deleted') this.keysDelta--
    this.advance(revision)
    return revision > this.claimed
  }

  /** etcd's own notification for this watcher: everything up to `revision` was sent. */
  notified(revision: number): void {
    this.advance(revision)
  }

  /** The revision a BOOKMARK may claim now, if any is known; it counts as claimed. */
  claim(): number | undefined {
    const revision = this.known()
    if (revision !== undefined) this.claimed = Math.max(this.claimed, revision)
    return revision
  }

  /** Asks etcd whether the range changed beyond what was delivered; at most one question at a time. */
  async probe(now = Date.now()): Promise<void> {
    if (this.probing || this.delivered === undefined) return
    const catchingUp = this.catchingUpUntil
    if (catchingUp && this.delivered < catchingUp.revision && now < catchingUp.time) return
    this.probing = true
    try {
      if (!this.keysAt) {
        const delta = this.keysDelta
        this.keysAt = { keys: await this.source.countAt(this.delivered), delta }
      }
      const base = this.known()!
      const delivered = this.delivered
      const census = await this.source.census()
      const keysNow = this.keysAt.keys + this.keysDelta - this.keysAt.delta
      // Events that came meanwhile make the answer hard to read: ask again next time.
      if (this.delivered !== delivered || census.revision <= base) return
      if (census.newest > base || census.keys !== keysNow) return
      if (this.source.requestProgress()) this.flushing = census.revision
    } catch {
      // etcd unreachable, or the start compacted away: no progress this time.
    } finally {
      if (this.flushing === undefined) this.probing = false
    }
  }

  /** The stream's answer to the round trip; true when it moved the revision a BOOKMARK may claim. */
  answered(): boolean {
    const revision = this.flushing
    if (revision === undefined) return false
    this.flushing = undefined
    this.probing = false
    const before = this.known() ?? 0
    this.confirmed = Math.max(this.confirmed, revision)
    return (this.known() ?? 0) > before
  }

  /** A new stream: an answer on the old one will not come. */
  streamChanged(): void {
    if (this.flushing === undefined) return
    this.flushing = undefined
    this.probing = false
  }

  private known(): number | undefined {
    if (this.delivered === undefined) return undefined
    return Math.max(this.delivered, this.confirmed)
  }

  private advance(revision: number): void {
    if (this.delivered === undefined || revision > this.delivered) this.delivered = revision
  }
}
