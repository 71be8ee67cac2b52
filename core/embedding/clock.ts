/**
 * A clock a test moves by hand (`ports.now`): what the server decides by
 * the time (token expiry, --event-ttl, graceful deletion, lease expiry)
 * follows it, with no waiting. Timers the server sets still run on the
 * runtime's own clock; only the time they compare against is this one.
 */
export interface ManualClock {
  /** The time as the server sees it; pass as `ports.now`. */
  now: () => Date
  /** Moves the time forward by `ms` milliseconds. */
  advance(ms: number): void
  /** Sets the time; it may go backwards, as a real clock can, though servers rarely expect it. */
  set(time: Date | number): void
}

/** A ManualClock starting at `start` (default: the real time now). */
export function manualClock(start: Date | number = Date.now()): ManualClock {
  let time = typeof start === 'number' ? start : start.getTime()
  return {
    now: () => new Date(time),
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance needs a finite, non-negative number of milliseconds, not ${ms}`)
      time += ms
    },
    set(to) {
      time = typeof to === 'number' ? to : to.getTime()
    },
  }
}
