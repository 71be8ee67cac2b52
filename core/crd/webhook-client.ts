/**
 * The port through which the server calls a webhook (a CRD's conversion
 * webhook): JSON in, JSON out, over HTTPS that trusts the configured CA
 * bundle. The runtime supplies the real client (`runtimes/node/daemon/webhook-client.ts`);
 * `fetchWebhookClient` serves where no CA bundle needs trusting.
 */
import type { EgressSelectionName } from '../config/egress-selector.js'
import type { WebhookClientConfig } from '../resources/apiextensions/types.js'
import { parseJsonInSlices } from '../machinery/json-in-slices.js'
import { MAX_NESTING_DEPTH } from '../machinery/limits.js'
import { MAX_WEBHOOK_RESPONSE_BYTES, readWebhookReply } from './webhook-reply.js'

export { MAX_WEBHOOK_RESPONSE_BYTES } from './webhook-reply.js'

/**
 * Where one call goes. The caller resolves a `service` reference to `url`
 * before calling; `serverName` is then the name the serving certificate must
 * carry (`<service>.<namespace>.svc`, as upstream checks), which the host of
 * the resolved URL may not be.
 */
export interface WebhookTarget extends WebhookClientConfig {
  serverName?: string
  /** A client certificate and its key (PEM) to present, as a kubeconfig's user may give. */
  clientCertificate?: { certificate: string; key: string }
  /** Sent as `Authorization: Bearer <token>` (a kubeconfig's token). */
  bearerToken?: string
  /** Accept any serving certificate (a kubeconfig's insecure-skip-tls-verify). */
  insecureSkipTLSVerify?: boolean
  /**
   * The egress selection the call belongs to (upstream: `cluster` for a
   * webhook named by a service, `controlplane` for one named by URL, the
   * issuer's `egressSelectorType` for JWT discovery). Absent: dialled directly.
   */
  egress?: EgressSelectionName
}

/** A GET's extra request headers (a bearer token for a distributed claim). */
export interface GetOptions {
  headers?: Record<string, string>
  timeoutMs: number
  /** A reply larger than this is refused (default: MAX_WEBHOOK_RESPONSE_BYTES). */
  maxBytes?: number
}

export interface WebhookClient {
  /**
   * POSTs `body` as JSON to `config.url` and answers the decoded JSON reply.
   * Rejects with an Error whose message says what went wrong (unreachable,
   * untrusted certificate, timeout, a non-2xx answer, a body that is not JSON).
   */
  post(config: WebhookTarget, body: unknown, timeoutMs: number): Promise<unknown>
  /**
   * GETs `config.url` and answers the body text of a 2xx reply (OIDC
   * discovery, key sets, distributed claims), trusting the caBundle as
   * `post` does. Rejects with `Get "<url>": <reason>` otherwise.
   */
  get(config: WebhookTarget, options: GetOptions): Promise<string>
}

/** Upstream's default timeout for a conversion webhook call. */
export const CONVERSION_WEBHOOK_TIMEOUT_MS = 30_000

/** The text of a non-2xx answer, shortened to what an error message can carry. */
export function describeHttpFailure(status: number, body: string): string {
  const text = body.trim()
  const shown = text.length > 256 ? `${text.slice(0, 256)}...` : text
  return shown ? `the server responded with status code ${status}: ${shown}` : `the server responded with status code ${status}`
}

/**
 * How deeply a reply may nest: an object's own bound and the few levels of
 * the review around it (a ConversionReview's `response.convertedObjects[]`).
 */
const MAX_REPLY_DEPTH = MAX_NESTING_DEPTH + 8

/** Parses a reply body as JSON, in time slices when it is large, with an error that names the problem. */
export async function parseWebhookReply(body: string): Promise<unknown> {
  try {
    return await parseJsonInSlices(body, MAX_REPLY_DEPTH)
  } catch (err) {
    throw new Error(`the response body is not JSON: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** `Post "<url>": <reason>`, the way Go's HTTP client words a failed call. */
export function postFailure(url: string, reason: string, status?: number): Error {
  const err = new Error(`Post ${JSON.stringify(url)}: ${reason}`)
  return status === undefined ? err : Object.assign(err, { status })
}

/** The non-2xx HTTP status a failed call got, when it got an answer at all (the admission webhook metrics' code). */
export function failureStatus(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status
  return typeof status === 'number' ? status : undefined
}

/** `Get "<url>": <reason>`, likewise. */
export function getFailure(url: string, reason: string): Error {
  return new Error(`Get ${JSON.stringify(url)}: ${reason}`)
}

/**
 * A client over the Web `fetch`: plain HTTP, or HTTPS trusted by the
 * platform's CAs. Refuses an https URL with a caBundle or a client
 * certificate, which `fetch` cannot be told to use; runtimes give a client
 * that can.
 */
export function fetchWebhookClient(fetchImpl: typeof fetch = fetch): WebhookClient {
  /** One call; answers the 2xx body text or throws the reason (without the verb and URL). */
  async function send(config: WebhookTarget, init: RequestInit, timeoutMs: number, maxBytes = MAX_WEBHOOK_RESPONSE_BYTES): Promise<string> {
    const url = config.url ?? ''
    if ((config.caBundle || config.clientCertificate || config.insecureSkipTLSVerify) && url.startsWith('https:')) {
      throw new Error('this client cannot trust a caBundle or present a certificate; the runtime must provide a webhook client')
    }
    // The deadline covers the whole call: a reply whose body drips in is cut at it too.
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const response = await fetchImpl(url, { ...init, signal })
      const text = await readWebhookReply(response, maxBytes)
      if (!response.ok) throw Object.assign(new Error(describeHttpFailure(response.status, text)), { status: response.status })
      return text
    } catch (err) {
      if (signal.aborted) throw new Error(`context deadline exceeded (no answer within ${timeoutMs}ms)`)
      if (!(err instanceof Error)) throw new Error(String(err))
      if (failureStatus(err) !== undefined) throw err
      throw new Error(errorCause(err) ?? err.message)
    }
  }
  return {
    async post(config, body, timeoutMs) {
      const url = config.url
      if (!url) throw new Error('the webhook client config has no url')
      const init = {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(config.bearerToken ? { authorization: `Bearer ${config.bearerToken}` } : {}),
        },
        body: JSON.stringify(body),
      }
      try {
        return await parseWebhookReply(await send(config, init, timeoutMs))
      } catch (err) {
        throw postFailure(url, (err as Error).message, failureStatus(err))
      }
    },
    async get(config, { headers = {}, timeoutMs, maxBytes }) {
      const url = config.url
      if (!url) throw new Error('the client config has no url')
      try {
        return await send(config, { method: 'GET', headers }, timeoutMs, maxBytes)
      } catch (err) {
        throw getFailure(url, (err as Error).message)
      }
    },
  }
}

/** fetch's own message is only "fetch failed"; the reason is in its cause. */
function errorCause(err: Error): string | undefined {
  const cause = (err as { cause?: unknown }).cause
  return cause instanceof Error ? cause.message : undefined
}
