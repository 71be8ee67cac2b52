/**
 * The webhook client of the Node runtime: HTTPS that trusts exactly the
 * config's caBundle (the platform's CAs when there is none) and presents the
 * config's client certificate, a deadline per call, JSON both ways for
 * webhooks and plain GETs for OIDC discovery. Connections are kept per TLS
 * setting and reused.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import {
  describeHttpFailure,
  getFailure,
  type GetOptions,
  parseWebhookReply,
  postFailure,
  type WebhookClient,
  type WebhookTarget,
} from '../../../core/crd/webhook-client.js'
import { bufferedReplies, MAX_WEBHOOK_RESPONSE_BYTES, replyTooLarge, sharedBoundExceeded } from '../../../core/crd/webhook-reply.js'
import type { EgressDialers } from '../adapter/egress-dialer.js'
import { httpsAgents } from './https-agents.js'
import { connectionFailureReason as reasonOf } from '../adapter/tls-errors.js'
import { TRACER_NAME } from '../../../core/tracing/context.js'

export interface NodeWebhookClient extends WebhookClient {
  /**
   * POSTs a JSON body and resolves on any 2xx answer without reading it as
   * JSON (an audit receiver's reply carries nothing); rejects as `post` does.
   */
  postIgnoringReply(config: WebhookTarget, body: string | Uint8Array, timeoutMs: number, headers?: Record<string, string>): Promise<void>
  /** Drops the kept connections. */
  close(): void
}

export { MAX_BUFFERED_WEBHOOK_BYTES } from '../../../core/crd/webhook-reply.js'

/** How much of a reply that is not used (an audit receiver's) is kept, for the error that names a failed status. */
const IGNORED_REPLY_KEPT_BYTES = 4096

/** How much of a reply is read: past `maxBytes` it is refused; of it, `keepBytes` kept and the rest read and dropped. */
interface ReplyLimits {
  keepBytes?: number
  maxBytes?: number
}

/** The reply's text; with `keepBytes`, only that much of it is kept and the rest read and dropped. */
function readBody(response: IncomingMessage, { keepBytes = Infinity, maxBytes = MAX_WEBHOOK_RESPONSE_BYTES }: ReplyLimits = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let held = 0
    const release = (): void => {
      bufferedReplies.give(held)
      held = 0
    }
    response.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        response.destroy(new Error(replyTooLarge(maxBytes)))
        return
      }
      const kept = Math.min(chunk.length, Math.max(0, keepBytes - held))
      if (kept === 0) return
      if (!bufferedReplies.take(kept)) {
        response.destroy(new Error(sharedBoundExceeded()))
        return
      }
      held += kept
      chunks.push(kept === chunk.length ? chunk : chunk.subarray(0, kept))
    })
    response.on('end', () => {
      release()
      resolve(Buffer.concat(chunks).toString('utf8'))
    })
    response.on('error', (err) => {
      release()
      reject(err)
    })
    response.on('aborted', () => {
      release()
      reject(new Error('the connection was closed before the response ended'))
    })
  })
}

/** `dialers`: the proxies of the egress selections (a target's `egress` picks one). */
export function nodeWebhookClient(dialers?: EgressDialers): NodeWebhookClient {
  const tlsAgents = httpsAgents(dialers)


  /**
   * One call; answers status and body text, or rejects with the reason worded for a client of Kubernetes.
   * Inside a traced request, the call is a CLIENT span (otelhttp's `HTTP <method>`) whose context
   * the webhook receives in `traceparent`.
   */
  async function send(
    config: WebhookTarget,
    method: 'GET' | 'POST',
    headers: Record<string, string | number>,
    payload: Buffer | undefined,
    timeoutMs: number,
    limits: ReplyLimits = {},
  ): Promise<{ status: number; text: string }> {
    if (!trace.getSpan(context.active())?.isRecording()) return sendUntraced(config, method, headers, payload, timeoutMs, limits)
    const tracer = trace.getTracer(TRACER_NAME)
    const attributes = { 'http.method': method, 'http.url': config.url! }
    return tracer.startActiveSpan(`HTTP ${method}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const carrier: Record<string, string> = {}
      propagation.inject(context.active(), carrier)
      try {
        const response = await sendUntraced(config, method, { ...headers, ...carrier }, payload, timeoutMs, limits)
        span.setAttribute('http.status_code', response.status)
        if (response.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR })
        return response
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message })
        throw err
      } finally {
        span.end()
      }
    })
  }

  async function sendUntraced(
    config: WebhookTarget,
    method: 'GET' | 'POST',
    headers: Record<string, string | number>,
    payload: Buffer | undefined,
    timeoutMs: number,
    limits: ReplyLimits,
  ): Promise<{ status: number; text: string }> {
    const url = new URL(config.url!)
    const secure = url.protocol === 'https:'
    const agent: HttpAgent = secure ? tlsAgents.agentFor(config) : tlsAgents.plainAgentFor(config.egress)
    const request = secure ? httpsRequest : httpRequest
    return new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url, { method, agent, headers })
      const fail = (err: unknown) => {
        clearTimeout(timer)
        reject(new Error(reasonOf(err, url)))
      }
      // The call fails at its deadline itself: a request still waiting for its connection (an egress proxy
      // that never answers the dial) emits no 'error' when destroyed, and the call would never end.
      const timer = setTimeout(() => {
        const err = new Error(`context deadline exceeded (no answer within ${timeoutMs}ms)`)
        req.destroy(err)
        fail(err)
      }, timeoutMs)
      req.on('error', fail)
      req.on('response', (res) => {
        readBody(res, limits).then((text) => {
          clearTimeout(timer)
          resolve({ status: res.statusCode ?? 0, text })
        }, fail)
      })
      req.end(payload)
    })
  }

  /** POSTs a JSON text; the answer's text when its status is 2xx, a failure naming the URL otherwise. */
  async function postJson(config: WebhookTarget, body: string | Uint8Array, timeoutMs: number, extra: Record<string, string> = {}, keepBytes = Infinity): Promise<string> {
    if (!config.url) throw new Error('the webhook client config has no url')
    // Bytes already encoded are sent as they are, not copied.
    const payload = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    const headers = {
      ...extra,
      'content-type': 'application/json',
      accept: 'application/json',
      'content-length': payload.length,
      ...(config.bearerToken ? { authorization: `Bearer ${config.bearerToken}` } : {}),
    }
    let response: { status: number; text: string }
    try {
      response = await send(config, 'POST', headers, payload, timeoutMs, { keepBytes })
    } catch (err) {
      throw postFailure(config.url, (err as Error).message)
    }
    if (response.status < 200 || response.status > 299) throw postFailure(config.url, describeHttpFailure(response.status, response.text), response.status)
    return response.text
  }

  async function post(config: WebhookTarget, body: unknown, timeoutMs: number): Promise<unknown> {
    const text = await postJson(config, JSON.stringify(body), timeoutMs)
    try {
      return await parseWebhookReply(text)
    } catch (err) {
      throw postFailure(config.url!, (err as Error).message)
    }
  }

  async function postIgnoringReply(config: WebhookTarget, body: string | Uint8Array, timeoutMs: number, extra: Record<string, string> = {}): Promise<void> {
    // The reply is read (the connection is used again) but not kept: a receiver's huge answers held the batches' memory.
    await postJson(config, body, timeoutMs, extra, IGNORED_REPLY_KEPT_BYTES)
  }

  async function get(config: WebhookTarget, { headers = {}, timeoutMs, maxBytes }: GetOptions): Promise<string> {
    if (!config.url) throw new Error('the client config has no url')
    let response: { status: number; text: string }
    try {
      response = await send(config, 'GET', headers, undefined, timeoutMs, maxBytes === undefined ? {} : { maxBytes })
    } catch (err) {
      throw getFailure(config.url, (err as Error).message)
    }
    if (response.status < 200 || response.status > 299) throw getFailure(config.url, describeHttpFailure(response.status, response.text))
    return response.text
  }

  return {
    post,
    postIgnoringReply,
    get,
    close() {
      tlsAgents.destroy()
    },
  }
}
