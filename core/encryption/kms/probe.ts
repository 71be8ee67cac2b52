/**
 * What the KMS providers share: upstream's timings, a health answer
 * remembered for a while (20 s when good, 3 s when not), and timers that
 * never keep a process alive on their own.
 */

export interface KmsTimings {
  /** How long a good health answer is reused. @default 20 s */
  healthyTtlMs: number
  /** How long a failed health answer is reused. @default 3 s */
  unhealthyTtlMs: number
  /** KMS v2: how often Status is polled while the plugin is healthy. @default 1 min */
  pollHealthyMs: number
  /** KMS v2: how often while it is not. @default 10 s */
  pollUnhealthyMs: number
  /** KMS v2: how long after the last good Status the DEK seed may still encrypt. @default 3 min */
  writeSeedTtlMs: number
}

export const DEFAULT_KMS_TIMINGS: KmsTimings = {
  healthyTtlMs: 20_000,
  unhealthyTtlMs: 3_000,
  pollHealthyMs: 60_000,
  pollUnhealthyMs: 10_000,
  writeSeedTtlMs: 180_000,
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** A timer that does not hold the process open (Node's unref, where the runtime has it). */
export function backgroundTimer(ms: number, run: () => void): ReturnType<typeof setTimeout> {
  const timer = setTimeout(run, ms)
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

/** A health check whose answer is reused for a while, and never run twice at once. */
export class CachedProbe {
  private last: { error: Error | undefined; at: number; ttl: number } | undefined
  private running: Promise<void> | undefined

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly timings: Pick<KmsTimings, 'healthyTtlMs' | 'unhealthyTtlMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  check(): Promise<void> {
    const last = this.last
    if (last && this.now() - last.at < last.ttl) return last.error ? Promise.reject(last.error) : Promise.resolve()
    return (this.running ??= this.run().finally(() => (this.running = undefined)))
  }

  private async run(): Promise<void> {
    try {
      await this.probe()
      this.last = { error: undefined, at: this.now(), ttl: this.timings.healthyTtlMs }
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err))
      this.last = { error, at: this.now(), ttl: this.timings.unhealthyTtlMs }
      throw error
    }
  }
}
