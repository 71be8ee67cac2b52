/**
 * The seats and queues of one Limited priority level (upstream's
 * fairqueuing queueset, simplified): a request runs at once while a seat is
 * free and nobody waits; otherwise its flow is dealt a hand of `handSize`
 * queues (shuffle sharding, so one heavy flow fills few queues) and it waits
 * in the shortest, or is refused when that queue is full. Freed seats go to
 * the queues in turn, so flows in different queues get equal turns. A level
 * without queuing (limit response Reject) refuses at once when full.
 */
import type { RequestInfo } from '../machinery/request-info.js'
import type { QueuingConfig } from './concurrency.js'
import { appendAll } from '../machinery/append-all.js'

export type Rejection = 'queue-full' | 'concurrency-limit' | 'time-out'

/** One request of a level, as the debug dumps list it (upstream's RequestDump). */
export interface RequestEntry {
  readonly flowSchema: string
  /** Empty where upstream computes none: an Exempt level, or one of fewer than two queues. */
  readonly distinguisher: string
  readonly user: string
  readonly info: RequestInfo
  /** When the level was asked, and when the request took its seat (ms since the epoch). */
  readonly arrived: number
  started?: number
  /** The queue it waited in, -1 for none (it ran at once, or the level has no queues). */
  queue: number
}

/**
 * What a level has done since it was made (upstream's queueset totals) and
 * the requests it runs now; kept across a change of its queuing settings.
 * A request that waits past its limit counts as rejected and cancelled, as
 * upstream's queueset counts it (its timed-out total stays 0).
 */
export class LevelActivity {
  dispatched = 0
  rejected = 0
  cancelled = 0
  readonly executing = new Set<RequestEntry>()

  constructor(private readonly clock: () => number) {}

  arrive(flowSchema: string, distinguisher: string, user: string, info: RequestInfo): RequestEntry {
    return { flowSchema, distinguisher, user, info, arrived: this.clock(), queue: -1 }
  }

  /** The request runs: counted as dispatched, listed until `finish`. */
  start(entry: RequestEntry): void {
    entry.started = this.clock()
    this.dispatched += 1
    this.executing.add(entry)
  }

  finish(entry: RequestEntry): void {
    this.executing.delete(entry)
  }
}

/** A queue as the dumps show it: the requests waiting, in order, and how many it has running. */
export interface QueueDump {
  readonly waiting: readonly RequestEntry[]
  readonly executing: number
}

export interface Ticket {
  release(): void
}

interface Waiter {
  queue: number
  entry: RequestEntry | undefined
  admit(ticket: Ticket): void
  timer: ReturnType<typeof setTimeout>
}

/** FNV-1a over the text, 32 bits, from a seed. */
function fnv1a(text: string, seed: number): number {
  let hash = seed
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/** A 53-bit hash of a flow: enough entropy to deal hands from up to 128 queues. */
export function flowHash(flow: string): number {
  return fnv1a(flow, 0x811c9dc5) * 0x200000 + (fnv1a(flow, 0x2545f491) & 0x1fffff)
}

/** `handSize` distinct queues out of `deckSize`, dealt from the hash as upstream's shuffle-sharding dealer does. */
export function dealHand(hash: number, deckSize: number, handSize: number): number[] {
  const deck = Array.from({ length: deckSize }, (_, i) => i)
  const hand: number[] = []
  let rest = hash
  for (let i = 0; i < Math.min(handSize, deckSize); i += 1) {
    const left = deckSize - i
    appendAll(hand, deck.splice(rest % left, 1))
    rest = Math.floor(rest / left)
  }
  return hand
}

export class QueueSet {
  /** Seats the level may use now; moves with borrowing and lending. */
  limit: number
  executing = 0
  private readonly queues: Waiter[][]
  private readonly executingPerQueue: number[]
  private next = 0
  private waitingCount = 0

  constructor(
    limit: number,
    private readonly queuing: QueuingConfig | undefined,
    /** Told whenever executing or waiting changes (the demand integrator, gauges). */
    private readonly onChange: () => void = () => {},
    /** The level's totals and running requests, which the filter's requests are entered in. */
    readonly activity: LevelActivity = new LevelActivity(Date.now),
  ) {
    this.limit = limit
    const count = queuing?.queues ?? 0
    // Made as requests first wait in them: most levels never queue, and every server builds each level (up to 128 queues).
    this.queues = new Array<Waiter[]>(count)
    this.executingPerQueue = new Array<number>(count)
  }

  get waiting(): number {
    return this.waitingCount
  }

  /**
   * A seat, now or after waiting at most `waitLimitMs`, or why none was
   * given. The entry, if any, is listed by the dumps while it waits and runs.
   */
  acquire(flow: string, waitLimitMs: number, entry?: RequestEntry): Promise<Ticket | Rejection> | Ticket | Rejection {
    if (this.executing < this.limit && this.waitingCount === 0) return this.seat(-1, entry)
    if (!this.queuing || this.queues.length === 0) return this.reject('concurrency-limit')
    const hand = dealHand(flowHash(flow), this.queues.length, this.queuing.handSize)
    const load = (q: number): number => (this.queues[q]?.length ?? 0) + (this.executingPerQueue[q] ?? 0)
    const queue = hand.reduce((best, q) => (load(q) < load(best) ? q : best))
    const waiters = (this.queues[queue] ??= [])
    if (waiters.length >= this.queuing.queueLengthLimit) return this.reject('queue-full')
    if (entry) entry.queue = queue
    return new Promise((resolve) => {
      const waiter: Waiter = {
        queue,
        entry,
        admit: resolve,
        timer: setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          this.waitingCount -= 1
          this.activity.cancelled += 1
          this.onChange()
          resolve(this.reject('time-out'))
        }, waitLimitMs),
      }
      waiters.push(waiter)
      this.waitingCount += 1
      this.onChange()
    })
  }

  /** Hands freed seats to waiting requests, each queue in turn; call after the limit grew. */
  dispatch(): void {
    while (this.executing < this.limit && this.waitingCount > 0) {
      const queue = this.nextNonEmptyQueue()
      const waiter = this.queues[queue]?.shift() as Waiter
      clearTimeout(waiter.timer)
      this.waitingCount -= 1
      waiter.admit(this.seat(queue, waiter.entry))
    }
  }

  /** Each queue's waiting requests (those entered with one) and running count, by index. */
  dump(): QueueDump[] {
    return Array.from({ length: this.queues.length }, (_, q) => ({
      waiting: (this.queues[q] ?? []).flatMap((w) => (w.entry ? [w.entry] : [])),
      executing: this.executingPerQueue[q] ?? 0,
    }))
  }

  private reject(reason: Rejection): Rejection {
    this.activity.rejected += 1
    return reason
  }

  private nextNonEmptyQueue(): number {
    for (let i = 0; i < this.queues.length; i += 1) {
      const q = (this.next + i) % this.queues.length
      if ((this.queues[q]?.length ?? 0) > 0) {
        this.next = (q + 1) % this.queues.length
        return q
      }
    }
    throw new Error('no request is waiting')
  }

  private seat(queue: number, entry: RequestEntry | undefined): Ticket {
    this.executing += 1
    if (queue >= 0) this.executingPerQueue[queue] = (this.executingPerQueue[queue] ?? 0) + 1
    if (entry) this.activity.start(entry)
    this.onChange()
    let released = false
    return {
      release: () => {
        if (released) return
        released = true
        this.executing -= 1
        if (queue >= 0) this.executingPerQueue[queue] = (this.executingPerQueue[queue] ?? 1) - 1
        if (entry) this.activity.finish(entry)
        this.dispatch()
        this.onChange()
      },
    }
  }
}
