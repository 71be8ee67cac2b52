/**
 * Upstream's buffered audit backend (`--audit-<backend>-mode=batch`): events
 * wait in a buffer of fixed size and leave in batches, when a batch is full
 * or has waited its longest, at most `throttleQps` batches a second. A full
 * buffer drops the new events and reports them: the memory an unreachable
 * backend can cost is bounded by the buffer, never by the request rate.
 */
import type { AuditBackend, AuditEvent } from './types.js'
import { appendAll } from '../machinery/append-all.js'

export interface BatchOptions {
  bufferSize: number
  maxBatchSize: number
  maxBatchWaitMs: number
  /** Batches per second; undefined: no throttle. */
  throttleQps?: number
  throttleBurst?: number
  /**
   * Batches handed to the backend and not yet answered, at most. While that
   * many are out, the buffer keeps the rest (and drops when full), so a
   * receiver that hangs costs the buffer and these batches, nothing more.
   * @default no bound
   */
  maxInFlight?: number
}

/** Why events were lost: the buffer was full, or the backend behind it failed. */
export type DroppedEvents = (plugin: string, reason: string, events: readonly AuditEvent[]) => void

export class BatchingBackend implements AuditBackend {
  readonly name: string
  private readonly queue: AuditEvent[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly sending = new Set<Promise<void>>()
  private tokens: number
  private lastRefill = Date.now()
  private waitingForRoom = false

  constructor(
    private readonly delegate: AuditBackend,
    private readonly options: BatchOptions,
    private readonly dropped: DroppedEvents,
  ) {
    this.name = delegate.name
    this.tokens = options.throttleBurst ?? 1
  }

  async processEvents(events: readonly AuditEvent[]): Promise<void> {
    const room = Math.max(0, this.options.bufferSize - this.queue.length)
    appendAll(this.queue, events.slice(0, room))
    if (events.length > room) this.dropped('buffered', 'audit buffer queue blocked', events.slice(room))
    if (this.queue.length >= this.options.maxBatchSize) this.flushSoon(0)
    else if (this.queue.length) this.flushSoon(this.options.maxBatchWaitMs)
  }

  async shutdown(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    while (this.queue.length) this.send(this.queue.splice(0, this.options.maxBatchSize))
    await Promise.all([...this.sending])
    await this.delegate.shutdown?.()
  }

  private flushSoon(afterMs: number): void {
    if (this.timer !== undefined && afterMs > 0) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.flush()
    }, afterMs)
    // A batch waiting out its time must not keep a runtime alive that is otherwise done (shutdown flushes it).
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  private async flush(): Promise<void> {
    if (!this.queue.length) return
    if (this.options.maxInFlight !== undefined && this.sending.size >= this.options.maxInFlight) {
      // Sent again when a batch out there is answered (send's finally).
      this.waitingForRoom = true
      return
    }
    await this.throttle()
    this.send(this.queue.splice(0, this.options.maxBatchSize))
    if (this.queue.length) this.flushSoon(this.queue.length >= this.options.maxBatchSize ? 0 : this.options.maxBatchWaitMs)
  }

  private send(batch: AuditEvent[]): void {
    const sent = this.delegate
      .processEvents(batch)
      .catch((err: unknown) => this.dropped(this.delegate.name, err instanceof Error ? err.message : String(err), batch))
      .finally(() => {
        this.sending.delete(sent)
        if (this.waitingForRoom) {
          this.waitingForRoom = false
          this.flushSoon(0)
        }
      })
    this.sending.add(sent)
  }

  /** A token bucket of `throttleBurst` batches, refilled at `throttleQps` a second. */
  private async throttle(): Promise<void> {
    const qps = this.options.throttleQps
    if (!qps) return
    const burst = this.options.throttleBurst ?? 1
    const now = Date.now()
    this.tokens = Math.min(burst, this.tokens + ((now - this.lastRefill) / 1000) * qps)
    this.lastRefill = now
    if (this.tokens < 1) {
      await new Promise((r) => setTimeout(r, ((1 - this.tokens) / qps) * 1000))
      this.tokens = 1
      this.lastRefill = Date.now()
    }
    this.tokens -= 1
  }
}
