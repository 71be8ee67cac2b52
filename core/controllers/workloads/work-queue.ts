/**
 * The keys a controller has to reconcile (upstream's rate-limited work
 * queue): a key added while waiting is reconciled once; a key being
 * reconciled when added again is reconciled again after; a failed
 * reconcile is retried after a pause that doubles up to a limit. Keys are
 * reconciled a few at a time, never one key twice at once.
 *
 * Reconciles start from a macrotask of their own, never straight from the
 * promise that added their key: two controllers that keep undoing each
 * other's writes (a StatefulSet recreating a pod a node keeps refusing) on
 * a store that answers without I/O (the memory store) would otherwise chain
 * promises forever, and no timer, request or shutdown would run again.
 */
import type { Logger } from '../../logging/logger.js'
import { nextMacrotask } from '../../machinery/time-slice.js'

/** The longest delay a timer takes (a signed 32-bit count of milliseconds). */
const LONGEST_TIMER_MS = 2 ** 31 - 1
const FIRST_RETRY_MS = 5
const MAX_RETRY_MS = 10_000

export interface WorkQueueOptions {
  /** Keys reconciled at once (upstream's workers per controller). @default 5 */
  concurrency?: number
  logger: Logger
  /** Names the controller in its log lines. */
  name: string
}

export class WorkQueue {
  private readonly waiting = new Set<string>()
  private readonly running = new Set<string>()
  private readonly again = new Set<string>()
  private readonly failures = new Map<string, number>()
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  private readonly idleWaiters: (() => void)[] = []
  private stopped = false
  /** A pump is due in the next macrotask. */
  private pumpScheduled = false

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    private readonly options: WorkQueueOptions,
  ) {}

  add(key: string): void {
    if (this.stopped) return
    if (this.running.has(key)) {
      this.again.add(key)
      return
    }
    this.waiting.add(key)
    this.schedulePump()
  }

  /**
   * Adds the key after `ms` (a deadline to check again: a Job's activeDeadlineSeconds, a CronJob's next run).
   * A wait past what a timer holds (2^31-1 ms, some 24.8 days: a yearly CronJob, a long minReadySeconds)
   * is waited in parts; given whole, the runtime would fire it after 1 ms, again and again.
   */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return
    const wait = Math.max(0, ms)
    const part = Math.min(wait, LONGEST_TIMER_MS)
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      if (wait > part) this.addAfter(key, wait - part)
      else this.add(key)
    }, part)
    ;(timer as { unref?: () => void }).unref?.()
    this.timers.add(timer)
  }

  /** Resolves when nothing waits or runs (tests and start-up passes wait on it). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  stop(): void {
    this.stopped = true
    this.waiting.clear()
    this.again.clear()
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }

  private isIdle(): boolean {
    return this.waiting.size === 0 && this.running.size === 0
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    void nextMacrotask().then(() => {
      this.pumpScheduled = false
      if (!this.stopped) this.pump()
    })
  }

  private pump(): void {
    const concurrency = this.options.concurrency ?? 5
    for (const key of this.waiting) {
      if (this.running.size >= concurrency) return
      this.waiting.delete(key)
      this.running.add(key)
      void this.run(key)
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.reconcile(key)
      this.failures.delete(key)
    } catch (err) {
      if (!this.stopped) {
        const failures = (this.failures.get(key) ?? 0) + 1
        this.failures.set(key, failures)
        this.options.logger.warn({ controller: this.options.name, key, err: String(err) }, 'reconcile failed; retrying')
        this.addAfter(key, Math.min(FIRST_RETRY_MS * 2 ** (failures - 1), MAX_RETRY_MS))
      }
    } finally {
      this.running.delete(key)
      if (this.again.delete(key)) this.waiting.add(key)
      if (!this.stopped) this.schedulePump()
      if (this.isIdle()) for (const wake of this.idleWaiters.splice(0)) wake()
    }
  }
}
