/**
 * Audit (upstream's WithAuditInit and WithAudit): every answer carries an
 * `Audit-ID` (the client's own, or a new one); with a policy, each request
 * the policy keeps is recorded at its level, stage by stage: RequestReceived
 * once the user is known, ResponseStarted for watches and other
 * long-running requests, ResponseComplete when the answer is done. Later
 * filters add to the record: authorization its decision, impersonation the
 * impersonated user.
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { Auditor } from '../../audit/auditor.js'
import { auditedUserAgent, objectReference, responseStatus } from '../../audit/event.js'
import { firstHeaderLine } from '../../machinery/header-lines.js'
import { sourceIPs } from '../../machinery/source-ips.js'
import { attributesOf } from '../../authz/authorizer.js'
import { observeBody } from '../observed-body.js'
import { plainHeadersOf, setAnswerHeader } from '../answer-headers.js'
import { answerBodyOf } from '../bytes-response.js'
import { isLongRunning } from '../../machinery/request-info.js'
import type { ChainEnv } from './context.js'
import type { ConnectionInfo } from '../../ports.js'

export const AUDIT_ID_HEADER = 'Audit-ID'

/** Outermost: the request's audit ID, taken from the client when it sent one, in every answer. */
export const auditIdFilter: MiddlewareHandler<ChainEnv> = async (c, next) => {
  // The first line, as Go's Header.Get reads it: the joined lines of thousands of them were echoed whole.
  const id = firstHeaderLine(c.req.raw.headers, 'audit-id', c.env?.connection?.headerLines).trim() || crypto.randomUUID()
  c.set('auditID', id)
  await next()
  setAnswerHeader(c.res, 'audit-id', id) // AUDIT_ID_HEADER, named in lower case as answers' headers are
}

/** The largest body read again for the event's requestObject; the handler's own limit refuses larger ones. */
const MAX_AUDITED_BODY_BYTES = 3 * 1024 * 1024

/**
 * The body's text, or undefined past the limit. Past it the copy is
 * cancelled and not read on: reading it to its end had the clone hold every
 * byte of the body for the original, unread until the handler ran (a body
 * of gigabytes was all in memory). The cancel is not awaited: a branch's
 * cancel settles only once the other branch is cancelled too, which the
 * handler does when its own limit refuses the body.
 */
async function boundedText(body: ReadableStream<Uint8Array>): Promise<string | undefined> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return text + decoder.decode()
    size += value.byteLength
    if (size > MAX_AUDITED_BODY_BYTES) {
      void reader.cancel().catch(() => {})
      return undefined
    }
    text += decoder.decode(value, { stream: true })
  }
}

async function bodyObject(request: Request): Promise<unknown> {
  const type = request.headers.get('content-type') ?? ''
  if (!request.body || !/json|yaml/.test(type)) return undefined
  const text = await boundedText(request.clone().body!)
  if (text === undefined) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    // YAML and broken JSON stay out of the event: the handler answers for them.
    return undefined
  }
}

/** A JSON answer that is a Status: its kind comes first, as the server writes every object (Go's field order), pretty or not. */
const STATUS_FIRST = /^\s*\{\s*"kind"\s*:\s*"Status"/
const decoder = new TextDecoder()

/**
 * What the event keeps of the answer: the whole object when the level records it, else only a Status (whose fields
 * upstream copies into every event's responseStatus). An answer the server made from bytes in hand is read from
 * those bytes, and parsed only when it is a Status or the level keeps it: reading it as a Response would copy it
 * (a stream, and the Node adapter's light answer made a runtime one) and parse every answer of every audited request.
 */
async function responseBody(response: Response, whole: boolean): Promise<unknown> {
  const record = plainHeadersOf(response)
  const type = (record ? record['content-type'] : response.headers.get('content-type')) ?? ''
  if (!type.includes('json')) return undefined
  const inHand = answerBodyOf(response)
  try {
    if (inHand === undefined) return JSON.parse(await response.clone().text()) as unknown
    const text = typeof inHand === 'string' ? inHand : undefined
    if (!whole && !STATUS_FIRST.test(text ?? decoder.decode((inHand as Uint8Array).subarray(0, 64)))) return undefined
    return JSON.parse(text ?? decoder.decode(inHand as Uint8Array)) as unknown
  } catch {
    return undefined
  }
}

/**
 * What upstream's failed-authentication audit names in the event's status
 * (getAuthMethods): the kinds of credential the request carried.
 */
function attemptedMethods(request: Request, connection: ConnectionInfo | undefined): string {
  const methods: string[] = []
  const authorization = request.headers.get('authorization')?.trim() ?? ''
  const basic = /^basic\s+(\S+)$/i.exec(authorization)
  if (basic && decodesToUserAndPassword(basic[1] ?? '')) methods.push('basic')
  const parts = authorization.split(' ')
  if (parts.length > 1 && parts[0]?.toLowerCase() === 'bearer') methods.push('bearer')
  if (new URL(request.url).searchParams.get('access_token')?.trim()) methods.push('access_token')
  if (connection?.clientCertificate) methods.push('x509')
  return methods.length ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided'
}

/** Whether a Basic credential is base64 of `user:password`, as Go's Request.BasicAuth reads it. */
function decodesToUserAndPassword(encoded: string): boolean {
  try {
    return atob(encoded).includes(':')
  } catch {
    return false
  }
}

/**
 * A request authentication refused (upstream's WithFailedAuthenticationAudit):
 * recorded when the policy keeps it, judged with no user, as one event at
 * ResponseStarted with code 401 and the credentials it tried. Without it,
 * a caller trying tokens left no trace in the audit log.
 */
export async function auditFailedAuthentication(auditor: Auditor, c: Context<ChainEnv>): Promise<void> {
  const { user: _nobody, ...attributes } = attributesOf({ username: '', groups: [] }, c.get('requestInfo'))
  const audit = beginAudit(auditor, c, attributes, new URL(c.req.url))
  await audit.stage('ResponseStarted', { metadata: {}, message: attemptedMethods(c.req.raw, c.env?.connection), code: 401 }).catch(() => {})
}

/** A request's audit record, judged by the policy on `attributes`, with what the request says of itself. */
function beginAudit(auditor: Auditor, c: Context<ChainEnv>, attributes: Parameters<Auditor['begin']>[0], url: URL): ReturnType<Auditor['begin']> {
  const info = c.get('requestInfo')
  const audit = auditor.begin(attributes, {
    auditID: c.get('auditID') ?? crypto.randomUUID(),
    requestURI: url.pathname + url.search,
    verb: info.verb,
    sourceIPs: sourceIPs(c.req.raw.headers, c.env?.connection?.remoteAddress),
    userAgent: auditedUserAgent(c.req.header('user-agent')),
    objectRef: objectReference(info),
  })
  // Authentication's annotations (a legacy token's Secret), as upstream's audit context holds them from the start.
  Object.assign(audit.annotations, c.get('authNotes')?.annotations)
  return audit
}

/** After authentication: the events of one request, at the level the policy gives it. */
export function auditFilter(auditor: Auditor): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const info = c.get('requestInfo')
    const url = new URL(c.req.url)
    const audit = beginAudit(auditor, c, attributesOf(c.get('user'), info), url)
    if (audit.level === 'None') return next()
    c.set('audit', audit)
    if (audit.wantsRequestObject) audit.setRequestObject(await bodyObject(c.req.raw))
    try {
      await audit.stage('RequestReceived')
    } catch {
      // blocking-strict: upstream answers in plain text (responsewriters.InternalError), and the handler never runs.
      auditor.rejected()
      return c.body(`Internal Server Error: ${JSON.stringify(url.pathname + url.search)}: failed to store audit event\n`, 500, {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
      })
    }
    await next()
    const res = c.res
    if (isLongRunning(info) && res.ok && res.body) {
      // The answer streams on: record that it started, and that it ended when its body does.
      await audit.stage('ResponseStarted', { metadata: {}, code: res.status }).catch(() => {})
      const done = () => void audit.stage('ResponseComplete', { metadata: {}, code: res.status }).catch(() => {})
      const ended = observeBody(res.body, { onClose: done })
      if (ended !== res.body) c.res = new Response(ended, res)
      return
    }
    const body = await responseBody(res, audit.wantsResponseObject)
    await audit.stage('ResponseComplete', responseStatus(res.status, body), audit.wantsResponseObject ? body : undefined).catch(() => {})
  }
}
