/**
 * Request metrics as upstream's endpoints/metrics records them:
 * `apiserver_request_total`, `apiserver_request_duration_seconds`,
 * `apiserver_response_sizes` (reads), `apiserver_longrunning_requests`, and
 * `apiserver_current_inflight_requests` while priority and fairness (which
 * has no max-in-flight filter to count them) is on.
 *
 * Labels come from the request info, never from a name the server does not
 * serve: a request for an unknown resource or subresource, or for a
 * non-resource path that was refused or not found, is not recorded (upstream
 * records only its installed routes), so that no client can grow the series
 * without bound. Runs after authentication: a caller must be known first.
 */
import type { MiddlewareHandler } from 'hono'
import {
  CURRENT_INFLIGHT,
  LONGRUNNING_REQUESTS,
  REQUEST_DURATION,
  REQUEST_TOTAL,
  RESPONSE_SIZES,
} from '../../metrics/definitions.js'
import type { Metrics } from '../../metrics/metrics.js'
import { APPLY_PATCH_TYPE } from '../media-types.js'
import { queryOf } from '../query.js'
import { knownSize } from '../response-size.js'
import { isLongRunning, type RequestInfo } from '../request-info.js'
import type { ChainEnv } from './context.js'

/** The server's component label (upstream's APIServerComponent). */
const COMPONENT = 'apiserver'
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy'])
const UNRECORDED_PATH_CODES = new Set([401, 403, 404])
const READ_VERBS = new Set(['GET', 'LIST'])
const VALID_VERBS = new Set(['LIST', 'GET', 'CREATE', 'UPDATE', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION', 'WATCH', 'CONNECT', 'PROXY', 'POST', 'PUT', 'HEAD', 'OPTIONS'])

export interface RequestMetricsOptions {
  /** Whether a resource request names a resource (and subresource) the server serves. */
  served(info: RequestInfo): boolean
  /** Count requests in flight here: priority and fairness is on, and max-in-flight does not run. */
  countInflight: boolean
  /** Milliseconds from a monotonic clock. */
  clock?: () => number
}

/** The verb as upstream reports it: upper case, server-side apply as APPLY, connections as CONNECT. */
export function reportedVerb(info: RequestInfo, request: Request): string {
  let verb = info.verb.toUpperCase()
  if (info.isResourceRequest && CONNECT_SUBRESOURCES.has(info.subresource) && info.verb !== 'proxy') verb = 'CONNECT'
  if (verb === 'PATCH' && request.headers.get('content-type')?.split(';')[0]?.trim() === APPLY_PATCH_TYPE) verb = 'APPLY'
  return VALID_VERBS.has(verb) ? verb : 'other'
}

/** Upstream's scope label: one object (or a create), a namespace, the cluster, or none for other paths. */
export function cleanScope(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource'
  if (info.namespace !== '') return 'namespace'
  return info.isResourceRequest ? 'cluster' : ''
}

/** The `dry_run` label: the dryRun values sorted and joined; a value other than All is `invalid`. */
export function cleanDryRun(params: URLSearchParams): string {
  const values = params.getAll('dryRun')
  if (values.some((v) => v !== 'All')) return 'invalid'
  return values.sort().join(',')
}

function requestLabels(info: RequestInfo): Record<string, string> {
  return info.isResourceRequest
    ? { group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource, scope: cleanScope(info), component: COMPONENT }
    : { group: '', version: '', resource: '', subresource: info.path, scope: '', component: COMPONENT }
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
  // `cancel` (a client that goes away) is in the streams standard, not yet in TypeScript's lib.
  const transformer = {
    transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>) {
      bytes += chunk.byteLength
      controller.enqueue(chunk)
    },
    flush: end,
    cancel: end,
  }
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(transformer))
}

export function requestMetricsFilter(metrics: Metrics, options: RequestMetricsOptions): MiddlewareHandler<ChainEnv> {
  const clock = options.clock ?? (() => performance.now())
  const inflight = {
    readOnly: options.countInflight ? metrics.gaugeOf(CURRENT_INFLIGHT, { request_kind: 'readOnly' }) : undefined,
    mutating: options.countInflight ? metrics.gaugeOf(CURRENT_INFLIGHT, { request_kind: 'mutating' }) : undefined,
  }
  return async (c, next) => {
    const started = clock()
    const info = c.get('requestInfo')
    const request = c.req.raw
    const verb = reportedVerb(info, request)
    const labels = requestLabels(info)
    const longRunning = isLongRunning(info)
    const pool = longRunning ? undefined : ['GET', 'LIST', 'HEAD'].includes(verb) ? inflight.readOnly : inflight.mutating
    pool?.add(1)
    const open = longRunning
      ? metrics.gaugeOf(LONGRUNNING_REQUESTS, {
          verb,
          group: labels.group ?? '',
          version: labels.version ?? '',
          resource: labels.resource ?? '',
          subresource: labels.subresource ?? '',
          scope: labels.scope ?? '',
          component: COMPONENT,
        })
      : undefined
    open?.add(1)
    try {
      await next()
    } finally {
      pool?.add(-1)
    }
    const res = c.res
    const unserved = info.isResourceRequest ? !options.served(info) : UNRECORDED_PATH_CODES.has(res.status)
    if (unserved) {
      open?.add(-1)
      return
    }
    const dryRun = cleanDryRun(queryOf(request))
    metrics.inc(REQUEST_TOTAL, { verb, dry_run: dryRun, ...labels, code: String(res.status) })
    metrics.record(REQUEST_DURATION, { verb, dry_run: dryRun, ...labels }, (clock() - started) / 1000)
    const sized = READ_VERBS.has(verb)
    // Neither sized nor open: leave the body alone. Reading \`res.body\` turns the Node adapter's
    // answer of bytes in hand into a stream (a ReadableStream and a slower write) for every create.
    if (!open && !sized) return
    // An answer of bytes in hand is sized without reading it (a HEAD's body is never written: left as it was).
    const known = open || request.method === 'HEAD' ? undefined : knownSize(res)
    if (known !== undefined) {
      metrics.record(RESPONSE_SIZES, { verb, ...labels }, known)
      return
    }
    if (!res.body) {
      open?.add(-1)
      if (sized) metrics.record(RESPONSE_SIZES, { verb, ...labels }, 0)
      return
    }
    c.res = new Response(
      measured(res.body, (bytes) => {
        open?.add(-1)
        if (sized) metrics.record(RESPONSE_SIZES, { verb, ...labels }, bytes)
      }),
      res,
    )
  }
}
