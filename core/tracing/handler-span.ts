/**
 * The handler's span, between the request's SERVER span and the storage
 * spans, as upstream's REST handlers start one (`Get`, `List`, `Create`,
 * `Update`, `Patch`, `Delete`) with the request's fields (accept, audit-id,
 * client, protocol, resource, scope, url, user-agent, verb): a trace then
 * shows how long the handler took apart from the filters before it.
 * Watches and the connect subresources get none: upstream's watch never ends
 * its span, and its connect handler starts none.
 */
import { type Attributes, context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { RequestInfo } from '../machinery/request-info.js'
import { cleanScope, normalizedVerb } from '../metrics/request-labels.js'
import { sourceIPs } from '../machinery/source-ips.js'
import { activeAuditId } from './context.js'

const SPAN_NAMES: Readonly<Record<string, string>> = {
  get: 'Get',
  list: 'List',
  create: 'Create',
  update: 'Update',
  patch: 'Patch',
  delete: 'Delete',
  deletecollection: 'Delete',
}

const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy'])

/** upstream's maxUserAgentLength and the suffix it marks a cut with. */
const MAX_USER_AGENT = 1024

/** The name of the handler's span for this request; undefined when upstream's handler starts none. */
export function handlerSpanName(info: RequestInfo): string | undefined {
  if (!info.isResourceRequest || CONNECT_SUBRESOURCES.has(info.subresource)) return undefined
  return SPAN_NAMES[info.verb]
}

export interface HandlerSpanRequest {
  request: Request
  info: RequestInfo
  /** The connection's peer; the span's client is found from it and the headers only when a span is recorded. */
  remoteAddress: string | undefined
  /** `HTTP/1.1` or `HTTP/2.0`, when the runtime says. */
  protocol: string | undefined
}

function handlerAttributes({ request, info, remoteAddress, protocol }: HandlerSpanRequest): Attributes {
  // The client's address as upstream's GetClientIP finds it (X-Forwarded-For, X-Real-Ip, the peer).
  const clientIP = sourceIPs(request.headers, remoteAddress)[0]
  const url = new URL(request.url)
  const agent = request.headers.get('user-agent') ?? ''
  return {
    accept: request.headers.get('accept') ?? '',
    'audit-id': activeAuditId(),
    client: clientIP ?? 'unknown',
    protocol: protocol ?? 'unknown',
    resource: info.resource,
    scope: cleanScope(info),
    url: url.pathname,
    'user-agent': agent.length > MAX_USER_AGENT ? `${agent.slice(0, MAX_USER_AGENT)}...TRUNCATED` : agent,
    verb: normalizedVerb(info, request, cleanScope(info), url.searchParams),
  }
}

/**
 * Runs `handle` inside the handler's span, when a request span is recording
 * (an unsampled request pays for nothing) and upstream's handler has one.
 * The span ends when the answer is ready; a thrown Status marks it an error
 * only for 5xx, as a server span is marked.
 */
export async function withHandlerSpan(tracer: Tracer | undefined, req: HandlerSpanRequest, handle: () => Promise<Response>): Promise<Response> {
  const name = tracer && trace.getSpan(context.active())?.isRecording() ? handlerSpanName(req.info) : undefined
  if (!tracer || !name) return handle()
  return tracer.startActiveSpan(name, { attributes: handlerAttributes(req) }, async (span) => {
    try {
      const res = await handle()
      if (res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      return res
    } catch (err) {
      const code = (err as { code?: unknown }).code
      if (typeof code !== 'number' || code >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
      throw err
    } finally {
      span.end()
    }
  })
}
