/**
 * A fixed number of requests with a bounded number in flight, also bounded
 * in time, so a slow machine makes the bench shorter, never longer. Figures
 * only: nothing here passes or fails.
 */

export interface LoadResult {
  /** Requests finished (fewer than asked when the time bound hit). */
  count: number
  /** Requests that failed or got an unexpected status. */
  errors: number
  seconds: number
  perSecond: number
  p50Ms: number
  p99Ms: number
}

export interface LoadOptions {
  total: number
  concurrency: number
  maxSeconds: number
  /** Return each request's latency too (sorted, ms). */
  keepLatencies?: boolean
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index] ?? Number.NaN
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50)
}

/** Several runs of one load as one: their requests over their time; the latencies, each run's median of them. */
export function combineLoads(runs: readonly LoadResult[]): LoadResult {
  const count = runs.reduce((sum, r) => sum + r.count, 0)
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0)
  return {
    count,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    seconds,
    perSecond: count / seconds,
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
  }
}

/** Runs `one(i)` for i = 0..total-1, `concurrency` at a time; `one` resolves true when the answer was the expected one. */
export async function runLoad(opts: LoadOptions, one: (i: number) => Promise<boolean>): Promise<LoadResult & { latencies?: number[] }> {
  const latencies: number[] = []
  let next = 0
  let errors = 0
  const start = performance.now()
  const deadline = start + opts.maxSeconds * 1000
  const worker = async (): Promise<void> => {
    while (next < opts.total && performance.now() < deadline) {
      const i = next++
      const t0 = performance.now()
      const ok = await one(i).catch(() => false)
      latencies.push(performance.now() - t0)
      if (!ok) errors++
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, worker))
  const seconds = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  return {
    count: latencies.length,
    errors,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(opts.keepLatencies ? { latencies } : {}),
  }
}
