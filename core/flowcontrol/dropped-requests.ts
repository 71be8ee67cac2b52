/**
 * The `Retry-After` of a request priority and fairness refuses, as upstream
 * chooses it for each priority level: 1 second to begin with, doubled (up
 * to 32) while a level keeps refusing at least three requests a second of
 * it, and lowered by one once fewer than one a second are refused, the way
 * TCP's congestion window grows and shrinks. The figure changes only when a
 * refusal falls in a new second, from the counts of the seconds before it;
 * after a rise it waits as many seconds as the new figure before the next.
 */

/** The longest Retry-After a refusal asks for, in seconds. */
export const MAX_RETRY_AFTER = 32

interface SecondCount {
  second: number
  refused: number
}

class LevelDrops {
  retryAfter = 1
  /** The seconds before the current one in which requests were refused, the oldest first; none older than MAX_RETRY_AFTER. */
  private readonly history: SecondCount[] = []
  private current: SecondCount = { second: 0, refused: 0 }
  /** When retryAfter last rose: 0 lets the first refusal's second raise it. */
  private raisedAt = 0

  record(second: number): void {
    if (second === this.current.second) {
      this.current.refused++
      return
    }
    this.history.push(this.current)
    while (this.history.length && this.current.second - this.history[0]!.second > MAX_RETRY_AFTER) this.history.shift()
    this.current = { second, refused: 1 }
    this.reconsider(second)
  }

  /** From the refusals of the seconds in [second - retryAfter, second). */
  private reconsider(second: number): void {
    let refused = 0
    for (let i = this.history.length - 1; i >= 0; i--) {
      const past = this.history[i]!
      if (second - past.second > this.retryAfter) break
      if (past.second < second) refused += past.refused
    }
    if (second - this.raisedAt >= this.retryAfter && refused >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(this.retryAfter * 2, MAX_RETRY_AFTER)
      this.raisedAt = second
    } else if (refused < this.retryAfter && this.retryAfter > 1) {
      this.retryAfter--
    }
  }
}

/** Each priority level's refusals, by its name, and the Retry-After they lead to. */
export class DroppedRequests {
  private readonly levels = new Map<string, LevelDrops>()

  constructor(private readonly nowMs: () => number) {}

  /** Notes one refusal by `level` now and answers the Retry-After, in seconds, to send with it. */
  refuse(level: string): number {
    let drops = this.levels.get(level)
    if (!drops) this.levels.set(level, (drops = new LevelDrops()))
    drops.record(Math.floor(this.nowMs() / 1000))
    return drops.retryAfter
  }
}
