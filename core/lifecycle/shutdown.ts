/**
 * Graceful shutdown in the spec's phases ("States and transitions"), free of
 * any runtime: the daemon calls it on SIGTERM with its listener.
 *
 * 1. `/readyz` fails at once (its `shutdown` check); everything else is
 *    served normally for `--shutdown-delay-duration`, so that load balancers
 *    stop sending traffic first.
 * 2. The delay over, new ordinary requests are refused. With
 *    `--shutdown-send-retry-after` the listener stays open and they get 429
 *    with Retry-After and `Connection: close` until the requests in flight
 *    are done; without it the listener stops accepting right away.
 * 3. Open watches end: spread over `--shutdown-watch-termination-grace-period`
 *    and waited for at most that long, or all at once without it.
 */
import type { Logger } from '../logging/logger.js'
import type { ServerLifecycle } from './lifecycle.js'

export interface ShutdownOptions {
  /** `--shutdown-delay-duration`, in ms. */
  delayMs: number
  /** `--shutdown-send-retry-after`. */
  sendRetryAfter: boolean
  /** `--shutdown-watch-termination-grace-period`, in ms; 0 ends watches at once. */
  watchTerminationGraceMs: number
}

export interface StoppableListener {
  /** Stops accepting connections: idle ones close now, busy ones after their response. Does not wait. */
  stopAccepting(): void
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves with `promise` or after `ms`, whichever comes first, leaving no timer behind. */
async function atMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs phases 1 to 3; resolves when no ordinary request is in flight and the watches are over (or their grace period is). */
export async function gracefulShutdown(
  lifecycle: ServerLifecycle,
  opts: ShutdownOptions,
  listener: StoppableListener,
  logger: Logger,
): Promise<void> {
  lifecycle.shutdownInitiated = true
  if (opts.delayMs > 0) {
    logger.info({ delayMs: opts.delayMs }, 'shutdown initiated: /readyz fails, serving on for --shutdown-delay-duration')
    await sleep(opts.delayMs)
  }
  lifecycle.shutdownDelayElapsed = true
  if (!opts.sendRetryAfter) listener.stopAccepting()
  if (lifecycle.inFlight.size > 0) logger.info({ inFlight: lifecycle.inFlight.size }, 'waiting for the requests in flight')
  await lifecycle.inFlight.drained()
  if (opts.sendRetryAfter) listener.stopAccepting()

  if (opts.watchTerminationGraceMs <= 0) {
    await lifecycle.endWatches()
    return
  }
  if (lifecycle.openWatches > 0) logger.info({ watches: lifecycle.openWatches }, 'ending open watches')
  // Half the grace period to end them leaves the other half for their last events to reach the clients.
  void lifecycle.endWatches(opts.watchTerminationGraceMs / 2)
  await atMost(lifecycle.watchesEnded(), opts.watchTerminationGraceMs)
}
