/**
 * A small work queue with upstream's workqueue guarantees that matter here:
 * an item is handled by one worker at a time, an item added while it runs is
 * run once more afterwards, and failures come back with exponential backoff.
 * Nothing runs before `start()` (the collector waits for its first lists) or
 * after `stop()`.
 *
 * On a store that answers at once (the in-memory one of an embedding
 * program) every item's work ends in the same turn as it began, and the next
 * item starts from there: the queue yields to other requests once a slice
 * of its work is spent, else a foreground deletion of 10,000 dependents
 * held the thread more than a second.
 */
import { TimeSlice } from '../machinery/time-slice.js'

export type WorkResult = 'done' | 'retry'

export interface WorkQueueOptions {
  workers: number
  /** First retry delay in ms; doubled on every further failure of the same item. */
  baseDelayMs?: number
  maxDelayMs?: number
  onError?: (key: string, err: unknown) => void
}

export class WorkQueue<T> {
  private readonly waiting = new Map<string, T>()
  private readonly running = new Set<string>()
  /** Items added again while running: they run once more when the current run ends. */
  private readonly again = new Map<string, T>()
  private readonly failures = new Map<string, number>()
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  private readonly idleWaiters: (() => void)[] = []
  private readonly drainWaiters: (() => void)[] = []
  private started = false
  private stopped = false
  /** The thread's slice: the queue's work yields to others' once it is spent. */
  private readonly slice = new TimeSlice()

  constructor(
    private readonly handle: (item: T) => Promise<WorkResult>,
    private readonly opts: WorkQueueOptions,
  ) {}

  add(key: string, item: T): void {
    if (this.stopped) return
    if (this.running.has(key)) this.again.set(key, item)
    else this.waiting.set(key, item)
    this.pump()
  }

  start(): void {
    this.started = true
    this.pump()
  }

  stop(): void {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    this.waiting.clear()
    this.again.clear()
    this.notifyIdle()
  }

  /** Nothing waiting, running or scheduled for a retry. */
  get idle(): boolean {
    return this.drained && this.timers.size === 0
  }

  /** Nothing waiting or running: every item added so far was tried (a failed one may be scheduled for a retry). */
  get drained(): boolean {
    return this.waiting.size === 0 && this.running.size === 0
  }

  /** Resolves the next time the queue is idle (at once if it is). */
  whenIdle(): Promise<void> {
    if (this.idle || this.stopped) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /** Resolves the next time the queue is drained (at once if it is): retries still to come are not waited for. */
  whenDrained(): Promise<void> {
    if (this.drained || this.stopped) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  private pump(): void {
    if (!this.started || this.stopped) return
    while (this.running.size < this.opts.workers && this.waiting.size > 0) {
      const [key, item] = this.waiting.entries().next().value as [string, T]
      this.waiting.delete(key)
      void this.run(key, item)
    }
    if (this.drained) this.notifyIdle()
  }

  private async run(key: string, item: T): Promise<void> {
    this.running.add(key)
    let result: WorkResult
    try {
      result = await this.handle(item)
    } catch (err) {
      if (!this.stopped) this.opts.onError?.(key, err)
      result = 'retry'
    }
    this.running.delete(key)
    const next = this.again.get(key)
    this.again.delete(key)
    if (next !== undefined) {
      // A newer reason to look at the item: run it now rather than after a backoff.
      this.waiting.set(key, next)
    } else if (result === 'retry') {
      this.retryLater(key, item)
    }
    if (result === 'done') this.failures.delete(key)
    await this.slice.pause()
    this.pump()
  }

  private retryLater(key: string, item: T): void {
    if (this.stopped) return
    const failures = (this.failures.get(key) ?? 0) + 1
    this.failures.set(key, failures)
    const base = this.opts.baseDelayMs ?? 5
    const delay = Math.min(base * 2 ** (failures - 1), this.opts.maxDelayMs ?? 30_000)
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      this.add(key, item)
    }, delay)
    // A pending retry does not keep a process alive on its own.
    ;(timer as { unref?: () => void }).unref?.()
    this.timers.add(timer)
  }

  /** Wakes who waits for the queue drained, and, with no retry scheduled either, who waits for it idle. */
  private notifyIdle(): void {
    for (const resolve of this.drainWaiters.splice(0)) resolve()
    if (this.idle || this.stopped) for (const resolve of this.idleWaiters.splice(0)) resolve()
  }
}
