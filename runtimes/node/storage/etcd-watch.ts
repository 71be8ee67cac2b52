/**
 * One watch on etcd, over a watch stream of its own (etcd-member.ts), with
 * the compact revision a 410 needs and etcd's progress notifications.
 *
 * - From a resourceVersion N: etcd replays every change after N, then goes
 *   live. From ""/"0": the current objects as ADDED events first (a list),
 *   then the changes after the list's revision, as upstream's etcd3 watcher.
 * - prev_kv on every event gives DELETED events their last state and lets a
 *   predicate see objects enter (ADDED) and leave (DELETED) the selection.
 * - When the stream breaks (etcd restarts, a network blip) the watch opens a
 *   new one from the revision after the last event it delivered, with a
 *   growing pause, so no event is lost or repeated. If etcd compacted that
 *   revision meanwhile, the watch ends with Compacted and clients relist.
 * - BOOKMARK events carry a revision whose events have all been delivered
 *   (etcd-watch-progress.ts says how it is known, also for a quiet range).
 */
import type { KubeObject } from '../../../core/machinery/object.js'
import { StorageError, type StorageEvent, type StorageEventType, type Watcher, type WatchOptions } from '../../../core/storage/interface.js'
import { parseResourceVersion, watchCompacted } from './etcd-errors.js'
import { keyRange } from './etcd-kv.js'
import { stampRevision } from '../../../core/storage/objects.js'
import { WatchChannel } from '../../../core/storage/watch-channel.js'
import type { CallStream, StreamHandlers } from './etcd-member.js'
import { type Census, type KeyChange, WatchProgress } from './etcd-watch-progress.js'
import { decodeWatchResponse, encodeWatchRequest, type KeyValue, type WatchEvent, type WatchResponse } from './etcd-wire.js'

/** An event's values as objects: the state before it, and after it (none for a deletion). */
interface Decoded {
  prev: KubeObject | undefined
  current: KubeObject | undefined
}

export interface EtcdWatchDeps {
  /** A new watch stream to some member (EtcdClient.watchStream). */
  openStream: (handlers: StreamHandlers) => CallStream
  /** A stored value as its object, stamped with the key's mod_revision (through the key's transformer). */
  decode: (kv: KeyValue) => Promise<KubeObject>
  /** The current objects under the watched range and the revision they were read at. */
  snapshot: (prefixOrKey: string) => Promise<{ objects: KubeObject[]; revision: number }>
  /** For BOOKMARKs of a quiet range (etcd-watch-progress.ts). */
  countAt: (prefixOrKey: string, revision: number) => Promise<number>
  census: (prefixOrKey: string) => Promise<Census>
  /** Turns an etcd failure into what the consumer sees (StorageError). */
  mapError: (prefixOrKey: string, err: unknown) => unknown
  bookmarkIntervalMs: number
  /** Called once when the watch ends, so the store forgets it. */
  release: () => void
}

/** The watch_id of etcd's answers to progress requests (none of our watchers). */
const PROGRESS_ANSWER = -1
const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 2000

export class EtcdWatch implements Watcher {
  private readonly channel: WatchChannel
  private readonly predicate: ((obj: KubeObject) => boolean) | undefined
  private readonly progress: WatchProgress
  private stream: CallStream | undefined
  /** Responses of an abandoned stream carry an older generation and are ignored. */
  private generation = 0
  private retryMs = FIRST_RETRY_MS
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private bookmarkTimer: ReturnType<typeof setInterval> | undefined
  /** Responses are handled one after another: decoding a value may wait (it may be encrypted). */
  private handled: Promise<void> = Promise.resolve()
  /** A watch from a resourceVersion: whether its first stream is still to be created. */
  private replaysHistory = false
  /**
   * The events up to this revision are the watch's start (the history after its resourceVersion, up to etcd's
   * revision when its first stream was created): outside the buffer's bound, as the snapshot's are.
   */
  private startUntil = 0

  constructor(
    private readonly prefix: string,
    opts: WatchOptions,
    private readonly deps: EtcdWatchDeps,
  ) {
    const bound = opts.bufferSize ? { capacity: opts.bufferSize, onOverflow: opts.onTerminated ?? (() => {}) } : undefined
    this.channel = new WatchChannel(() => this.release(), bound)
    this.predicate = opts.predicate
    this.progress = new WatchProgress({
      countAt: (revision) => deps.countAt(prefix, revision),
      census: () => deps.census(prefix),
      requestProgress: () => this.sendProgressRequest(),
    })
    let from: number | undefined
    try {
      from = parseResourceVersion(prefix, opts.resourceVersion)
    } catch (err) {
      this.channel.fail(err)
      return
    }
    if (opts.signal) this.channel.stopOn(opts.signal)
    if (this.channel.ended) return
    if (opts.bookmarks) this.startBookmarks(opts.bookmarkIntervalMs ?? deps.bookmarkIntervalMs)
    if (from === undefined) {
      void this.startFromSnapshot()
    } else {
      this.progress.delivered = from
      this.replaysHistory = true
      this.connect()
    }
  }

  /** True once stopped or failed (possibly already at construction, for a malformed resourceVersion). */
  get ended(): boolean {
    return this.channel.ended
  }

  stop(): void {
    this.channel.stop()
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent, undefined> {
    return this.channel[Symbol.asyncIterator]()
  }

  private async startFromSnapshot(): Promise<void> {
    try {
      const { objects, revision } = await this.deps.snapshot(this.prefix)
      if (this.channel.ended) return
      for (const obj of objects) {
        // The start's events, outside the buffer's bound (core/storage/watch-channel.ts, pushStart).
        if (!this.predicate || this.predicate(obj)) this.channel.pushStart({ type: 'ADDED', object: obj, revision: Number(obj.metadata.resourceVersion ?? 0) })
      }
      this.progress.delivered = revision
      this.progress.startWith(objects.length)
      this.connect()
    } catch (err) {
      this.channel.fail(this.deps.mapError(this.prefix, err))
    }
  }

  private connect(): void {
    this.retryTimer = undefined
    if (this.channel.ended) return
    const generation = ++this.generation
    let stream: CallStream
    try {
      stream = this.deps.openStream({
        message: (bytes) => {
          if (generation !== this.generation) return
          let res: WatchResponse
          try {
            res = decodeWatchResponse(bytes)
          } catch (err) {
            this.channel.fail(new StorageError('Unavailable', this.prefix, `etcd sent a watch response that cannot be read: ${(err as Error).message}`))
            return
          }
          // Checked again when its turn comes: a response of a stream abandoned meanwhile is replayed by the next one.
          this.handled = this.handled.then(() => (generation === this.generation ? this.onResponse(res, generation) : undefined))
        },
        end: () => {
          if (generation === this.generation) this.onBroken()
        },
      })
    } catch {
      // The client is closed: the store is closing, and a watch that began as it did has nothing to
      // watch with. Retrying would keep the process alive for ever.
      this.channel.fail(new StorageError('Unavailable', this.prefix, 'the store is closing'))
      return
    }
    this.stream = stream
    this.progress.streamChanged()
    stream.send(
      encodeWatchRequest({
        create_request: {
          ...keyRange(this.prefix),
          // Resume after the last event delivered, never after a merely reported progress.
          start_revision: (this.progress.delivered ?? 0) + 1,
          prev_kv: true,
          progress_notify: true,
        },
      }),
    )
  }

  private async onResponse(res: WatchResponse, generation: number): Promise<void> {
    if (this.channel.ended) return
    if (res.canceled) {
      const compacted = res.compact_revision
      this.channel.fail(
        compacted > 0
          ? watchCompacted(this.prefix, this.progress.delivered ?? 0, compacted)
          : new StorageError('Unavailable', this.prefix, `etcd canceled the watch of ${this.prefix}: ${res.cancel_reason || 'no reason given'}`),
      )
      return
    }
    if (res.created) {
      this.retryMs = FIRST_RETRY_MS
      if (this.replaysHistory) this.startUntil = res.header.revision
      this.replaysHistory = false
      this.progress.created(res.header.revision)
      return
    }
    if (res.events.length === 0) {
      const revision = res.header.revision
      // An answer to our progress request carries no watcher id; etcd's own notification carries ours.
      if (res.watch_id !== PROGRESS_ANSWER) this.progress.notified(revision)
      // Confirmed progress goes out at once: a read may be waiting for it.
      else if (this.progress.answered()) this.bookmark()
      return
    }
    let decoded: Decoded[]
    try {
      decoded = await Promise.all(res.events.map((e) => this.decodeEvent(e)))
    } catch (err) {
      this.channel.fail(err)
      return
    }
    if (this.channel.ended || generation !== this.generation) return
    try {
      for (const [i, event] of res.events.entries()) {
        const revision = event.kv.mod_revision
        if (!this.progress.eventArrived(revision, changeOf(event))) {
          throw new StorageError(
            'Unavailable',
            this.prefix,
            `etcd sent an event at revision ${revision} after reporting progress past it; the watch of ${this.prefix} must start over`,
          )
        }
        this.translate(event, decoded[i]!)
      }
    } catch (err) {
      this.channel.fail(err)
    }
  }

  /** One etcd event as the watcher sees it, with upstream's predicate transitions. */
  private translate(event: WatchEvent, { prev, current }: Decoded): void {
    const rev = event.kv.mod_revision
    const p = this.predicate
    // Without a predicate the previous value is not decoded (see decodeEvent): that it exists is enough.
    const hadPrev = Boolean(event.prev_kv)
    const was = hadPrev && (!p || (prev !== undefined && p(prev)))
    if (event.type === 'Delete') {
      if (!prev) throw new Error(`etcd sent the deletion of ${event.kv.key.toString()} without its previous value`)
      if (was) this.emit('DELETED', stampRevision(prev, rev), rev)
      return
    }
    if (!current) throw new Error(`etcd sent a change of ${event.kv.key.toString()} without its value`)
    const is = !p || p(current)
    // Without prev_kv (compacted away) a modification is judged by its new state alone.
    const existed = hadPrev ? was : event.kv.version > 1 && is
    if (is && existed) this.emit('MODIFIED', current, rev)
    else if (is) this.emit('ADDED', current, rev)
    else if (was && prev) this.emit('DELETED', stampRevision(prev, rev), rev)
  }

  /**
   * The previous value is decoded only when it is used: for a deletion (the
   * DELETED event carries it) or to run the predicate on it. A watch of
   * every object (the watch cache's) needs only to know it existed, which
   * saves a decode per update, as upstream's watcher does.
   */
  private async decodeEvent(event: WatchEvent): Promise<Decoded> {
    const [prev, current] = await Promise.all([
      event.prev_kv && (event.type === 'Delete' || this.predicate) ? this.deps.decode(event.prev_kv) : undefined,
      event.type === 'Delete' ? undefined : this.deps.decode(event.kv),
    ])
    return { prev, current }
  }

  private emit(type: StorageEventType, object: KubeObject, revision: number): void {
    if (revision <= this.startUntil) this.channel.pushStart({ type, object, revision })
    else this.channel.push({ type, object, revision })
  }

  private onBroken(): void {
    this.closeCurrentStream()
    this.retryLater()
  }

  private retryLater(): void {
    if (this.channel.ended || this.retryTimer) return
    const delay = this.retryMs
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS)
    this.retryTimer = setTimeout(() => this.connect(), delay)
  }

  /** Each interval: a BOOKMARK at what is known, and a question to etcd so a quiet range moves on too. */
  private startBookmarks(intervalMs: number): void {
    this.bookmarkTimer = setInterval(() => {
      // After the responses already received, so a bookmark never passes an event still being decoded.
      this.handled = this.handled.then(() => this.bookmark())
      void this.progress.probe()
    }, intervalMs)
  }

  private bookmark(): void {
    const revision = this.progress.claim()
    if (revision !== undefined) this.emit('BOOKMARK', { metadata: { resourceVersion: String(revision) } }, revision)
  }

  /**
   * A BOOKMARK at what is known now, and a question to etcd whose confirmed
   * answer sends another at once (the watch cache waits on it for a consistent read).
   */
  requestProgress(): void {
    if (this.channel.ended) return
    this.handled = this.handled.then(() => this.bookmark())
    void this.progress.probe()
  }

  private sendProgressRequest(): boolean {
    if (!this.stream) return false
    this.stream.send(encodeWatchRequest({ progress_request: {} }))
    return true
  }

  private closeCurrentStream(): void {
    this.generation++
    this.stream?.close()
    this.stream = undefined
  }

  private release(): void {
    if (this.bookmarkTimer !== undefined) clearInterval(this.bookmarkTimer)
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer)
    this.bookmarkTimer = undefined
    this.retryTimer = undefined
    this.closeCurrentStream()
    this.deps.release()
  }
}

function changeOf(event: WatchEvent): KeyChange {
  if (event.type === 'Delete') return 'deleted'
  // etcd restarts a key's version at 1 when it is created (again).
  return event.kv.version === 1 ? 'created' : 'changed'
}
