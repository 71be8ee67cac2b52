/**
 * Retries of a call to an authentication or authorization webhook, as
 * upstream's webhook client retries them (DefaultAuthWebhookRetryBackoff:
 * 500 ms, growing 1.5 times, up to 20% jitter, five attempts in all), and
 * only for failures that say "try again" (DefaultShouldRetry): a connection
 * reset, an answer of 500, 504 or 429. A webhook that answered anything
 * else, or could not be reached at all, is not asked again.
 */

export interface Backoff {
  initialMs: number
  factor: number
  jitter: number
  attempts: number
}

export const AUTH_WEBHOOK_BACKOFF: Backoff = { initialMs: 500, factor: 1.5, jitter: 0.2, attempts: 5 }

const RETRIED_STATUS = new Set([429, 500, 504])
// The webhook clients word failures as Go's HTTP client does; these are how a dropped connection reads.
const CONNECTION_RESET = /ECONNRESET|connection reset|socket hang up|closed before the response ended/i

/** The HTTP status of a failed call: the error's own `status` field, else the one its message names. */
function statusOf(err: unknown): number | undefined {
  const field = (err as { status?: unknown } | null)?.status
  if (typeof field === 'number') return field
  const m = /status code (\d{3})\b/.exec(err instanceof Error ? err.message : String(err))
  return m ? Number(m[1]) : undefined
}

/** Whether a failed call is worth another attempt (upstream's DefaultShouldRetry). */
export function isRetriable(err: unknown): boolean {
  const status = statusOf(err)
  if (status !== undefined) return RETRIED_STATUS.has(status)
  return CONNECTION_RESET.test(err instanceof Error ? err.message : String(err))
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Calls `call` until it succeeds, fails for good, or the attempts are spent; the last failure is thrown. */
export async function withBackoff<T>(call: () => Promise<T>, backoff: Backoff = AUTH_WEBHOOK_BACKOFF, random: () => number = Math.random): Promise<T> {
  let delay = backoff.initialMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await call()
    } catch (err) {
      if (attempt >= backoff.attempts || !isRetriable(err)) throw err
      await sleep(delay + delay * backoff.jitter * random())
      delay *= backoff.factor
    }
  }
}
