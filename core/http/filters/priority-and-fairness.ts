/**
 * API Priority and Fairness (upstream: WithPriorityAndFairness), in place of
 * max-in-flight while `--enable-priority-and-fairness` is on: each request
 * is classified by the FlowSchemas, answers carry the
 * `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`
 * headers, Exempt levels run at once, and a Limited level runs the request
 * on one of its seats, queues it, or refuses it with 429. Long-running
 * requests other than watches are not limited, as upstream; a watch holds
 * its seat while it is set up, any other request until its answer's body
 * has been sent (hold-until-sent.ts), as upstream's seat is held until the
 * handler has written the answer.
 */
import type { MiddlewareHandler } from 'hono'
import type { FlowControl } from '../../flowcontrol/flow-control.js'
import { CURRENT_INFLIGHT, CURRENT_INQUEUE } from '../../metrics/definitions.js'
import type { GaugeHandle, Metrics } from '../../metrics/metrics.js'
import { isLongRunning } from '../../machinery/request-info.js'
import { goHttpError } from '../respond.js'
import { setAnswerHeader } from '../answer-headers.js'
import { TOO_MANY_REQUESTS } from './max-in-flight.js'
import type { ChainEnv } from './context.js'
import { releaseWhenSent } from './hold-until-sent.js'

/** Upstream's X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID, in lower case as answers' headers are named. */
const FLOW_SCHEMA_HEADER = 'x-kubernetes-pf-flowschema-uid'
const PRIORITY_LEVEL_HEADER = 'x-kubernetes-pf-prioritylevel-uid'

/** Upstream's APF metric names and help texts (stability level first, as component-base writes it). */
const REJECTED = { name: 'apiserver_flowcontrol_rejected_requests_total', help: '[BETA] Number of requests rejected by API Priority and Fairness' }
const EXECUTING_SEATS = { name: 'apiserver_flowcontrol_current_executing_seats', help: '[BETA] Concurrency (number of seats) occupied by the currently executing requests' }
const IN_QUEUE = { name: 'apiserver_flowcontrol_current_inqueue_requests', help: '[BETA] Number of requests currently pending in queues' }

/** Upstream's read-only kind for the in-flight counts; anything else is mutating. */
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch'])

export function priorityAndFairnessFilter(flowControl: FlowControl, metrics: Metrics, waitLimitMs: number): MiddlewareHandler<ChainEnv> {
  // Requests executing (exempt or on a seat) and waiting in a queue, read-only and mutating apart, as upstream's filter notes them.
  const kinds = {
    readOnly: { executing: metrics.gaugeOf(CURRENT_INFLIGHT, { request_kind: 'readOnly' }), waiting: metrics.gaugeOf(CURRENT_INQUEUE, { request_kind: 'readOnly' }) },
    mutating: { executing: metrics.gaugeOf(CURRENT_INFLIGHT, { request_kind: 'mutating' }), waiting: metrics.gaugeOf(CURRENT_INQUEUE, { request_kind: 'mutating' }) },
  }
  // Upstream counts these by priority level and flow schema; one pair of gauges per pair of names.
  const gauges = new Map<string, { executing: GaugeHandle; inQueue: GaugeHandle }>()
  const gaugesOf = (priorityLevel: string, flowSchema: string) => {
    const key = `${priorityLevel}\u0000${flowSchema}`
    let pair = gauges.get(key)
    if (!pair) {
      const labels = { priority_level: priorityLevel, flow_schema: flowSchema }
      pair = { executing: metrics.gauge(EXECUTING_SEATS.name, EXECUTING_SEATS.help, labels), inQueue: metrics.gauge(IN_QUEUE.name, IN_QUEUE.help, labels) }
      gauges.set(key, pair)
    }
    return pair
  }
  return async (c, next) => {
    const info = c.get('requestInfo')
    if (isLongRunning(info) && info.verb !== 'watch') return next()
    const user = c.get('user')
    const { schema, level, flow, distinguisher, dispatched } = flowControl.classify(user, info)
    // Listed by /debug/api_priority_and_fairness/dump_requests while it waits and runs.
    const entry = level.activity.arrive(schema.metadata.name ?? '', distinguisher, user.username, info)
    const identify = (response: Response): Response => {
      setAnswerHeader(response, FLOW_SCHEMA_HEADER, schema.metadata.uid ?? '')
      setAnswerHeader(response, PRIORITY_LEVEL_HEADER, level.limits.uid)
      return response
    }
    const kind = READ_ONLY_VERBS.has(info.verb) ? kinds.readOnly : kinds.mutating
    // A watch gives its seat back once it is set up (its handler returned); any other answer once its body is sent.
    const release = (done: () => void): void => (info.verb === 'watch' ? done() : releaseWhenSent(c, done))
    if (!level.queueSet) {
      dispatched()
      level.activity.start(entry)
      kind.executing.add(1)
      const finished = (): void => {
        kind.executing.add(-1)
        level.activity.finish(entry)
      }
      try {
        await next()
      } catch (err) {
        finished()
        throw err
      }
      identify(c.res)
      release(finished)
      return
    }
    const { executing, inQueue } = gaugesOf(level.limits.name, schema.metadata.name ?? '')
    let outcome = level.queueSet.acquire(flow, waitLimitMs, entry)
    if (outcome instanceof Promise) {
      inQueue.add(1)
      kind.waiting.add(1)
      try {
        outcome = await outcome
      } finally {
        inQueue.add(-1)
        kind.waiting.add(-1)
      }
    }
    if (typeof outcome === 'string') {
      const labels = { flow_schema: schema.metadata.name ?? '', priority_level: level.limits.name, reason: outcome }
      metrics.addCounter(REJECTED.name, REJECTED.help, labels)
      const retryAfter = flowControl.droppedRequests.refuse(level.limits.name)
      return identify(goHttpError(TOO_MANY_REQUESTS, 429, { 'Retry-After': String(retryAfter) }))
    }
    dispatched()
    executing.add(1)
    kind.executing.add(1)
    const seat = outcome
    const done = (): void => {
      executing.add(-1)
      kind.executing.add(-1)
      seat.release()
    }
    try {
      await next()
    } catch (err) {
      done()
      throw err
    }
    identify(c.res)
    release(done)
  }
}
