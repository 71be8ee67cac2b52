/**
 * Tracing (upstream's WithTracing, placed right after authentication so the
 * user is known): one SERVER span per request, named as upstream names it
 * (`GET /api/v1/namespaces/{:namespace}/pods/{:name}`, or the bare method for
 * non-resource paths), with the HTTP attributes and the audit ID. A client's
 * W3C `traceparent` is the span's parent only for users in system:masters or
 * system:monitoring; anyone else's becomes a link from a new trace, so that
 * an untrusted client can neither choose trace IDs nor make the server
 * sample. The span's context is active while the rest of the chain runs,
 * so storage and webhook spans become its children.
 */
import { type Attributes, context, type Link, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { MiddlewareHandler } from 'hono'
import type { UserInfo } from '../../machinery/object.js'
import { withAuditId } from '../../tracing/context.js'
import { parseTraceparent } from '../../tracing/traceparent.js'
import { observeBody } from '../observed-body.js'
import { isLongRunning, type RequestInfo } from '../../machinery/request-info.js'
import type { ChainEnv } from './context.js'

/** The groups whose trace context is trusted (upstream's notSystemPrivilegedGroup). */
const TRUSTED_GROUPS = new Set(['system:masters', 'system:monitoring'])

/** upstream's getSpanNameFromRequestInfo: the route with placeholders, never the names themselves. */
export function spanName(method: string, info: RequestInfo): string {
  if (!info.isResourceRequest) return method
  let route = `/${info.apiPrefix}`
  if (info.apiGroup) route += `/${info.apiGroup}`
  route += `/${info.apiVersion}`
  if (info.namespace) route += '/namespaces/{:namespace}'
  route += `/${info.resource}`
  if (info.name) route += '/{:name}'
  if (info.subresource) route += `/${info.subresource}`
  return `${method} ${route}`
}

const trusted = (user: UserInfo | undefined): boolean => (user?.groups ?? []).some((g) => TRUSTED_GROUPS.has(g))

function requestAttributes(request: Request, url: URL, remoteAddress: string | undefined, auditID: string): Attributes {
  const attrs: Attributes = {
    'http.method': request.method,
    'http.scheme': url.protocol.replace(/:$/, ''),
    'net.host.name': url.hostname,
    'http.target': url.pathname + url.search,
    'audit-id': auditID.slice(0, 64),
  }
  const agent = request.headers.get('user-agent')
  if (agent) attrs['user_agent.original'] = agent
  if (remoteAddress) attrs['net.sock.peer.addr'] = remoteAddress
  const length = Number(request.headers.get('content-length'))
  if (length > 0) attrs['http.request_content_length'] = length
  return attrs
}

function finish(span: Span, status: number): void {
  span.setAttribute('http.status_code', status)
  // As otelhttp: a server span is an error for 5xx only; 4xx are the client's.
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
}

export function tracingFilter(tracer: Tracer): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const request = c.req.raw
    const url = new URL(request.url)
    const info = c.get('requestInfo')
    const auditID = c.get('auditID') ?? ''
    const remote = parseTraceparent(request.headers.get('traceparent'))
    const parentTrusted = remote !== undefined && trusted(c.get('user'))
    const parent = parentTrusted ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT
    const links: Link[] = remote && !parentTrusted ? [{ context: remote }] : []
    const span = tracer.startSpan(
      spanName(request.method, info),
      { kind: SpanKind.SERVER, attributes: requestAttributes(request, url, c.env?.connection?.remoteAddress, auditID), links },
      parent,
    )
    const active = withAuditId(trace.setSpan(parent, span), auditID)
    try {
      await context.with(active, next)
    } catch (err) {
      finish(span, 500)
      throw err
    }
    const res = c.res
    if (isLongRunning(info) && res.body && span.isRecording()) {
      // A watch's span lasts as long as its stream, as upstream's handler does.
      const body = observeBody(res.body, { onClose: () => finish(span, res.status) })
      if (body !== res.body) c.res = new Response(body, res)
      return
    }
    finish(span, res.status)
  }
}
