/**
 * Request metrics as upstream's endpoints/metrics records them:
 * `apiserver_request_total`, `apiserver_request_duration_seconds`,
 * `apiserver_response_sizes` (reads) and `apiserver_longrunning_requests`
 * (the requests in flight are counted by max-in-flight or priority and
 * fairness, whichever runs). The labels are worked out in
 * core/metrics/request-labels.ts.
 *
 * Upstream records in its handlers, so only a request that reaches one is
 * counted: one refused by authentication, impersonation or authorization
 * (401, 403) is not, and one refused by max-in-flight or priority and
 * fairness is counted with code 429 in `apiserver_request_total` alone
 * (upstream's RecordDroppedRequest). `handlerReachedFilter`, the chain's
 * last filter, tells the two apart. A request for an unknown resource or
 * subresource, or a non-resource path upstream does not instrument, is not
 * recorded, so that no client can grow the series without bound.
 */
import type { MiddlewareHandler } from 'hono'
import {
  LONGRUNNING_REQUESTS,
  REQUEST_DURATION,
  REQUEST_TERMINATIONS,
  REQUEST_TOTAL,
  RESPONSE_SIZES,
} from '../../metrics/definitions.js'
import type { Metrics } from '../../metrics/metrics.js'
import {
  APISERVER_COMPONENT,
  cleanDryRun,
  cleanScope,
  nonResourceLabels,
  normalizedVerb,
  type RequestLabels,
  reportedVerb,
  resourceLabels,
  routeScope,
  terminationPath,
} from '../../metrics/request-labels.js'
import { queryOf } from '../query.js'
import { knownSize } from '../response-size.js'
import { observeBody } from '../observed-body.js'
import { isLongRunning, type RequestInfo } from '../../machinery/request-info.js'
import type { ChainEnv } from './context.js'

const READ_VERBS = new Set(['GET', 'LIST'])

export interface RequestMetricsOptions {
  /** Whether a resource request names a resource (and subresource) the server serves. */
  served(info: RequestInfo): boolean
  /** Milliseconds from a monotonic clock. */
  clock?: () => number
}

/** The verb of upstream's "HTTP" log line (NormalizedVerb: the request's own scope, any method kept). */
export function logVerb(info: RequestInfo, request: Request): string {
  return normalizedVerb(info, request, cleanScope(info), queryOf(request))
}

/** Marks that the request got past every filter to its handler; the chain's last filter. */
export const handlerReachedFilter: MiddlewareHandler<ChainEnv> = async (c, next) => {
  c.set('handlerReached', true)
  await next()
}

/** Counts the bytes of a body as it is read, and says when it ends, however it ends. */
function measured(body: ReadableStream<Uint8Array>, onEnd: (bytes: number) => void): ReadableStream<Uint8Array> {
  let bytes = 0
  let ended = false
  const end = (): void => {
    if (ended) return
    ended = true
    onEnd(bytes)
  }
  return observeBody(body, { onChunk: (n) => (bytes += n), onClose: end, onCancel: end })
}

/**
 * A request the server ended itself (upstream's RecordRequestTermination):
 * refused with 429 by max-in-flight or priority and fairness, or answered
 * 504 by the timeout filter; by the request info's scope, and a path's
 * labels carry the path as subresource when it is one of the server's own
 * (terminationPath).
 */
export function countTermination(metrics: Metrics, info: RequestInfo, request: Request, code: number): void {
  const scope = cleanScope(info)
  const verb = reportedVerb(info, request, scope, queryOf(request))
  const where = info.isResourceRequest
    ? { group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource }
    : { group: '', version: '', resource: '', subresource: terminationPath(info.path) }
  metrics.inc(REQUEST_TERMINATIONS, { verb, ...where, scope, component: APISERVER_COMPONENT, code: String(code) })
}

/**
 * A request refused before its handler with 429, as upstream's
 * max-in-flight and priority-and-fairness filters record it: in
 * `apiserver_request_total` (RecordDroppedRequest, the request info's scope;
 * for a path, its empty subresource rather than the path) and as a
 * termination.
 */
function countDropped(metrics: Metrics, info: RequestInfo, request: Request, query: URLSearchParams): void {
  const scope = cleanScope(info)
  const verb = reportedVerb(info, request, scope, query)
  const where = info.isResourceRequest
    ? { group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource }
    : { group: '', version: '', resource: '', subresource: '' }
  metrics.inc(REQUEST_TOTAL, { verb, dry_run: cleanDryRun(query), ...where, scope, component: APISERVER_COMPONENT, code: '429' })
  countTermination(metrics, info, request, 429)
}

/**
 * The samples one kind of answer moves, found once per label set and then
 * kept (the label sets are bounded, see above). Each is found on its first
 * use, so that a series appears in /metrics when it is first recorded, as before.
 */
class RequestSeries {
  private total: { add(by?: number): void } | undefined
  private duration: { observe(value: number): void } | undefined
  private sizes: { observe(value: number): void } | undefined

  constructor(
    private readonly metrics: Metrics,
    private readonly verb: string,
    private readonly dryRun: string,
    private readonly labels: RequestLabels,
    private readonly code: string,
  ) {}

  answered(seconds: number): void {
    const { metrics, verb, dryRun, labels, code } = this
    ;(this.total ??= metrics.counter(REQUEST_TOTAL.name, REQUEST_TOTAL.help, { verb, dry_run: dryRun, ...labels, code })).add()
    ;(this.duration ??= metrics.histogramOf(REQUEST_DURATION, { verb, dry_run: dryRun, ...labels })).observe(seconds)
  }

  sized(bytes: number): void {
    ;(this.sizes ??= this.metrics.histogramOf(RESPONSE_SIZES, { verb: this.verb, ...this.labels })).observe(bytes)
  }
}

function requestSeries(metrics: Metrics, kept: Map<string, RequestSeries>, verb: string, dryRun: string, labels: RequestLabels, code: string): RequestSeries {
  // Every label goes into the key, whatever fields RequestLabels grows; no label value holds a newline.
  let key = `${verb}\n${dryRun}\n${code}`
  for (const name in labels) key += `\n${labels[name as keyof RequestLabels]}`
  let series = kept.get(key)
  if (!series) {
    series = new RequestSeries(metrics, verb, dryRun, labels, code)
    kept.set(key, series)
  }
  return series
}

export function requestMetricsFilter(metrics: Metrics, options: RequestMetricsOptions): MiddlewareHandler<ChainEnv> {
  const clock = options.clock ?? (() => performance.now())
  const kept = new Map<string, RequestSeries>()
  return async (c, next) => {
    const started = clock()
    const info = c.get('requestInfo')
    const request = c.req.raw
    const longRunning = isLongRunning(info)
    const method = request.method.toUpperCase()
    await next()
    const res = c.res
    if (info.isResourceRequest && !options.served(info)) return
    const query = queryOf(request)
    if (!c.get('handlerReached')) {
      if (res.status === 429) countDropped(metrics, info, request, query)
      return
    }
    let labels: RequestLabels | undefined
    if (info.isResourceRequest) labels = resourceLabels(info, routeScope(info, method))
    else labels = nonResourceLabels(info.path, res)
    if (!labels) return
    const verb = reportedVerb(info, request, labels.scope, query)
    const dryRun = cleanDryRun(query)
    const series = requestSeries(metrics, kept, verb, dryRun, labels, String(res.status))
    const answered = (): void => series.answered((clock() - started) / 1000)
    // Upstream sizes what its GET and LIST routes answer, and `?watch=` is served by the LIST route.
    const sized = READ_VERBS.has(verb) || (verb === 'WATCH' && info.isResourceRequest && query.has('watch'))
    if (!longRunning) {
      answered()
      // Not sized: leave the body alone. Reading `res.body` turns the Node adapter's answer of
      // bytes in hand into a stream (a ReadableStream and a slower write) for every create.
      if (!sized) return
      // An answer of bytes in hand is sized without reading it (a HEAD's body is never written: left as it was).
      const known = request.method === 'HEAD' ? undefined : knownSize(res)
      if (known !== undefined) {
        series.sized(known)
        return
      }
    }
    // Upstream counts watches and connections open (pods/log is a plain GET route to it), by the request info's scope.
    let open: { add(by: number): void } | undefined
    if (longRunning && info.subresource !== 'log') {
      const scope = cleanScope(info)
      open = metrics.gaugeOf(LONGRUNNING_REQUESTS, { ...labels, verb: reportedVerb(info, request, scope, query), scope })
      open.add(1)
    }
    if (!res.body) {
      open?.add(-1)
      if (longRunning) answered()
      if (sized) series.sized(0)
      return
    }
    const body = measured(res.body, (bytes) => {
        // A watch or a stream is recorded as upstream's handler returns: when it ends, timed whole.
        if (longRunning) {
          open?.add(-1)
          answered()
        }
        if (sized) series.sized(bytes)
      })
    // An observable body (a watch's) is watched in place: no stream stage per event.
    if (body !== res.body) c.res = new Response(body, res)
  }
}
