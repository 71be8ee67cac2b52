/**
 * API Priority and Fairness (upstream: WithPriorityAndFairness), in place of
 * max-in-flight while `--enable-priority-and-fairness` is on: each request
 * is classified by the FlowSchemas, answers carry the
 * `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`
 * headers, Exempt levels run at once, and a Limited level runs the request
 * on one of its seats, queues it, or refuses it with 429. Long-running
 * requests other than watches are not limited, as upstream; a watch holds
 * its seat while it is set up.
 */
import type { MiddlewareHandler } from 'hono'
import type { FlowControl } from '../../flowcontrol/flow-control.js'
import type { Rejection, Ticket } from '../../flowcontrol/queue-set.js'
import type { Metrics } from '../../metrics/metrics.js'
import { isLongRunning } from '../request-info.js'
import { statusResponse } from '../respond.js'
import { tooManyRequests } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

const FLOW_SCHEMA_HEADER = 'X-Kubernetes-PF-FlowSchema-UID'
const PRIORITY_LEVEL_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID'

export function priorityAndFairnessFilter(flowControl: FlowControl, metrics: Metrics, waitLimitMs: number): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const info = c.get('requestInfo')
    if (isLongRunning(info) && info.verb !== 'watch') return next()
    const { schema, level, flow, dispatched } = flowControl.classify(c.get('user'), info)
    const identify = (response: Response): Response => {
      response.headers.set(FLOW_SCHEMA_HEADER, schema.metadata.uid ?? '')
      response.headers.set(PRIORITY_LEVEL_HEADER, level.limits.uid)
      return response
    }
    if (!level.queueSet) {
      dispatched()
      await next()
      identify(c.res)
      return
    }
    const outcome: Ticket | Rejection = await level.queueSet.acquire(flow, waitLimitMs)
    if (typeof outcome === 'string') {
      const labels = { flow_schema: schema.metadata.name ?? '', priority_level: level.limits.name, reason: outcome }
      metrics.addCounter('apiserver_flowcontrol_rejected_requests_total', 'Number of requests rejected by API Priority and Fairness', labels)
      return identify(statusResponse(tooManyRequests('Too many requests, please try again later.', 1)))
    }
    dispatched()
    try {
      await next()
    } finally {
      outcome.release()
    }
    identify(c.res)
  }
}
