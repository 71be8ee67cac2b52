/**
 * `--max-requests-inflight` and `--max-mutating-requests-inflight` with
 * priority and fairness off (upstream: WithMaxInFlightLimit): two pools,
 * reads (get, list) and everything else. A request that finds its pool
 * full gets 429 with `Retry-After: 1` at once, without queueing, its words
 * in plain text as upstream's filter writes them (not a Status). Long-running
 * requests (watch, proxy, exec...) take no slot; any other keeps its slot
 * until its answer's body has been sent (hold-until-sent.ts); members of system:masters
 * are always served; a limit of 0 turns its pool off.
 */
import type { MiddlewareHandler } from 'hono'
import type { Metrics } from '../../metrics/metrics.js'
import { isLongRunning } from '../../machinery/request-info.js'
import { goHttpError } from '../respond.js'
import type { ChainEnv } from './context.js'
import { releaseWhenSent } from './hold-until-sent.js'

export interface InFlightLimits {
  /** Non-mutating requests at once; 0: no limit. */
  readOnly: number
  /** Mutating requests at once; 0: no limit. */
  mutating: number
}

const NON_MUTATING_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch'])
const PRIVILEGED_GROUP = 'system:masters'
const INFLIGHT_GAUGE = 'apiserver_current_inflight_requests'
const INFLIGHT_HELP = 'Number of requests in flight per kind, as the max-in-flight filter counts them.'
const DROPPED_COUNTER = 'apiserver_dropped_requests_total'
const DROPPED_HELP = 'Number of requests refused with 429 because their in-flight pool was full.'
/** Upstream's words for a request refused by max-in-flight or priority and fairness, written as plain text. */
export const TOO_MANY_REQUESTS = 'Too many requests, please try again later.'

type RequestKind = 'readOnly' | 'mutating'

class Pool {
  inUse = 0
  constructor(
    readonly kind: RequestKind,
    readonly limit: number,
    private readonly metrics: Metrics,
  ) {
    this.publish()
  }

  tryAcquire(): boolean {
    if (this.inUse >= this.limit) return false
    this.inUse += 1
    this.publish()
    return true
  }

  release(): void {
    this.inUse -= 1
    this.publish()
  }

  private publish(): void {
    this.metrics.setGauge(INFLIGHT_GAUGE, INFLIGHT_HELP, { request_kind: this.kind }, this.inUse)
  }
}

/** The filter, or undefined when both limits are 0 and there is nothing to enforce. */
export function maxInFlightFilter(limits: InFlightLimits, metrics: Metrics): MiddlewareHandler<ChainEnv> | undefined {
  if (limits.readOnly === 0 && limits.mutating === 0) return undefined
  const pools: Record<RequestKind, Pool | undefined> = {
    readOnly: limits.readOnly > 0 ? new Pool('readOnly', limits.readOnly, metrics) : undefined,
    mutating: limits.mutating > 0 ? new Pool('mutating', limits.mutating, metrics) : undefined,
  }
  return async (c, next) => {
    const info = c.get('requestInfo')
    if (isLongRunning(info)) return next()
    const kind: RequestKind = NON_MUTATING_VERBS.has(info.verb) ? 'readOnly' : 'mutating'
    const pool = pools[kind]
    if (!pool) return next()
    if (pool.tryAcquire()) {
      try {
        await next()
      } catch (err) {
        pool.release()
        throw err
      }
      // Counted until its answer is sent: a LIST's body is encoded as the client reads it.
      releaseWhenSent(c, () => pool.release())
      return
    }
    // A full pool still answers the super-user (and the server's own loopback client).
    if (c.get('user').groups.includes(PRIVILEGED_GROUP)) return next()
    metrics.addCounter(DROPPED_COUNTER, DROPPED_HELP, { request_kind: kind })
    return goHttpError(TOO_MANY_REQUESTS, 429, { 'Retry-After': '1' })
  }
}
