/**
 * The server's runtime phases (spec: "States and transitions"), as signals
 * the filters and health checks read, and the two wait groups graceful
 * shutdown waits on: ordinary requests in flight and open watches. The
 * sequence that moves through the phases is shutdown.ts; a runtime only
 * starts it (upstream: the lifecycle signals of the generic API server).
 */

/** A count that can be waited on until it reaches zero. */
class WaitGroup {
  private count = 0
  private waiters: Array<() => void> = []

  get size(): number {
    return this.count
  }

  add(): void {
    this.count += 1
  }

  done(): void {
    this.count = Math.max(0, this.count - 1)
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake()
  }

  /** Resolves once the count is zero. */
  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }
}

export class ServerLifecycle {
  /** SIGTERM or its like arrived: `/readyz` fails from now on. */
  shutdownInitiated = false
  /** The shutdown delay is over: new ordinary requests are refused (429 with --shutdown-send-retry-after, else 503). */
  shutdownDelayElapsed = false
  /** Ordinary (non-long-running) requests being served; graceful shutdown waits for them. */
  readonly inFlight = new WaitGroup()
  /** How to end each open watch. A Set, not an AbortSignal: thousands of watches each adding a listener to one signal look like a leak to runtimes. */
  private readonly watches = new Set<() => void>()
  private watchesGone: Array<() => void> = []

  get openWatches(): number {
    return this.watches.size
  }

  /** Registers an open watch and how to end it; the function returned forgets it (call it when the watch ends). */
  trackWatch(end: () => void): () => void {
    this.watches.add(end)
    return () => {
      this.watches.delete(end)
      if (this.watches.size === 0) for (const wake of this.watchesGone.splice(0)) wake()
    }
  }

  /** Ends open watches: all at once, or one after another spread over `spreadMs` so that clients reconnect elsewhere gradually. */
  async endWatches(spreadMs = 0): Promise<void> {
    const open = [...this.watches]
    const gap = open.length > 0 ? spreadMs / open.length : 0
    for (const end of open) {
      end()
      if (gap >= 1) await new Promise((resolve) => setTimeout(resolve, gap))
    }
  }

  /** Resolves once no watch is open. */
  watchesEnded(): Promise<void> {
    if (this.watches.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.watchesGone.push(resolve))
  }
}
