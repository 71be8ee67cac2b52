/**
 * Waiting for storage at start-up (`--storage-initialization-timeout`): the
 * daemon keeps checking until etcd answers, and gives up with the last reason
 * once the deadline passes, so an operator sees why the server is not ready.
 */
import { formatGoDuration } from '../../../core/machinery/duration.js'

export interface ReadinessWait {
  /** The whole wait (`--storage-initialization-timeout`). */
  timeoutMs: number
  /** Each check's own limit (`--kvstore-readycheck-timeout`). @default 2000 */
  checkTimeoutMs?: number
  /** Pause between failed checks. @default 1000 */
  retryMs?: number
  signal?: AbortSignal
}

/** Resolves at the first passing `check(timeoutMs)`; rejects after `timeoutMs` with the last failure's reason. */
export async function waitForStorage(check: (timeoutMs: number) => Promise<void>, opts: ReadinessWait): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs
  const retryMs = opts.retryMs ?? 1000
  let reason = 'no check ran'
  for (;;) {
    opts.signal?.throwIfAborted()
    const left = deadline - Date.now()
    try {
      await check(Math.max(1, Math.min(opts.checkTimeoutMs ?? 2000, left)))
      return
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err)
    }
    const pause = Math.min(retryMs, deadline - Date.now())
    if (pause <= 0) {
      throw new Error(`storage was not ready within ${formatGoDuration(opts.timeoutMs * 1e6)}: ${reason}`)
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}
