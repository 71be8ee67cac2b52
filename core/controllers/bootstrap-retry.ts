/**
 * Start-up work that must not stop the server when it fails: a write the
 * admission chain refuses (AlwaysDeny, a policy or webhook denying the
 * loopback user), a storage hiccup. Upstream's bootstrap controllers log
 * such a failure and try again later (the system namespaces controller
 * every minute, the post-start hooks on their poll); so does this.
 */
import type { Logger } from '../logging/logger.js'

/** The pause before the next attempt: doubled after each failure, up to the maximum. */
export interface RetryDelays {
  /** @default 1000 */
  firstDelayMs: number
  /** @default 60000 (upstream's system namespaces controller resyncs every minute) */
  maxDelayMs: number
}

export const DEFAULT_RETRY_DELAYS: RetryDelays = { firstDelayMs: 1000, maxDelayMs: 60_000 }

export interface RetriedWork {
  /** Settles after the first attempt, whether it succeeded or not: start-up waits for this, never for success. */
  readonly firstAttempt: Promise<void>
  /** True once an attempt has succeeded. */
  done(): boolean
  /** No further attempts (shutdown). */
  stop(): void
}

/** Runs `work` now, and again after a growing pause for as long as it fails; each failure is logged. */
export function retryUntilDone(what: string, work: () => Promise<void>, logger: Logger, delays: RetryDelays = DEFAULT_RETRY_DELAYS): RetriedWork {
  let succeeded = false
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const attempt = async (n: number): Promise<void> => {
    try {
      await work()
      succeeded = true
    } catch (err) {
      if (stopped) return
      const delayMs = Math.min(delays.maxDelayMs, delays.firstDelayMs * 2 ** (n - 1))
      logger.warn({ task: what, attempt: n, retryInMs: delayMs, err: String(err) }, 'start-up work failed; trying again later')
      timer = setTimeout(() => void attempt(n + 1), delayMs)
      // A retry alone keeps no process alive (Node's timers have unref; others have no such call).
      ;(timer as { unref?: () => void }).unref?.()
    }
  }
  const firstAttempt = attempt(1)
  return {
    firstAttempt,
    done: () => succeeded,
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
