/**
 * Building and writing one audit event: the request's metadata as upstream
 * records it, the objects by level, and the two text forms of the log
 * backend (one JSON object per line, or upstream's legacy line).
 */
import type { RequestInfo } from '../machinery/request-info.js'
import type { UserInfo } from '../machinery/object.js'
import { isPlainObject } from '../machinery/object.js'
import { AUDIT_API_VERSION, type AuditEvent, type AuditLevel, type ObjectReference, type ResponseStatus } from './types.js'

/** Go's MicroTime on the wire: RFC 3339 with six fractional digits, in UTC. */
export function microTime(at: Date, extraMicros = 0): string {
  const iso = at.toISOString() // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}${String(extraMicros).padStart(3, '0')}Z`
}

export function objectReference(info: RequestInfo): ObjectReference | undefined {
  if (!info.isResourceRequest) return undefined
  const ref: ObjectReference = { resource: info.resource }
  if (info.namespace) ref.namespace = info.namespace
  if (info.name) ref.name = info.name
  if (info.apiGroup) ref.apiGroup = info.apiGroup
  if (info.apiVersion) ref.apiVersion = info.apiVersion
  if (info.subresource) ref.subresource = info.subresource
  return ref
}

/**
 * The object reference once the handler has read the request's object
 * (upstream's LogRequestObject, for a create or an update): what the URL
 * left empty of namespace and name, and the object's uid and
 * resourceVersion, taken from the object as the client sent it. Members in
 * upstream's order; a new reference, so events already written keep theirs.
 */
export function withRequestObjectMeta(ref: ObjectReference | undefined, obj: unknown): ObjectReference | undefined {
  if (!ref || !isPlainObject(obj) || !isPlainObject(obj['metadata'])) return ref
  const meta = obj['metadata']
  const text = (key: string): string | undefined => (typeof meta[key] === 'string' && meta[key] ? meta[key] : undefined)
  const filled: ObjectReference = {}
  if (ref.resource) filled.resource = ref.resource
  const namespace = ref.namespace || text('namespace')
  if (namespace) filled.namespace = namespace
  const name = ref.name || text('name')
  if (name) filled.name = name
  const uid = ref.uid || text('uid')
  if (uid) filled.uid = uid
  if (ref.apiGroup) filled.apiGroup = ref.apiGroup
  if (ref.apiVersion) filled.apiVersion = ref.apiVersion
  const resourceVersion = ref.resourceVersion || text('resourceVersion')
  if (resourceVersion) filled.resourceVersion = resourceVersion
  if (ref.subresource) filled.subresource = ref.subresource
  return filled
}

/** upstream's maxUserAgentLength for an event, and the mark it leaves on a cut one. */
const MAX_USER_AGENT = 1024
const USER_AGENT_CUT = '...TRUNCATED'

/** The user agent an event records: its first 1024 bytes, marked when cut, as upstream keeps it. */
export function auditedUserAgent(agent: string | undefined): string | undefined {
  // Header values arrive as latin1 text: one character a byte, as Go counts them.
  return agent !== undefined && agent.length > MAX_USER_AGENT ? `${agent.slice(0, MAX_USER_AGENT)}${USER_AGENT_CUT}` : agent
}

/** The members of a Status an event keeps; any other answer is its code alone. */
export function responseStatus(code: number, body: unknown): ResponseStatus {
  if (!isPlainObject(body) || body['kind'] !== 'Status') return { metadata: {}, code }
  const out: ResponseStatus = { metadata: {}, code }
  for (const key of ['status', 'message', 'reason'] as const) {
    const value = body[key]
    if (typeof value === 'string' && value) out[key] = value
  }
  if (isPlainObject(body['details'])) out.details = body['details']
  return out
}

/** An object without `metadata.managedFields` (the policy's omitManagedFields), copied only when it has some. */
export function withoutManagedFields(obj: unknown): unknown {
  if (!isPlainObject(obj)) return obj
  if (Array.isArray(obj['items'])) return { ...obj, items: obj['items'].map(withoutManagedFields) }
  const metadata = obj['metadata']
  if (!isPlainObject(metadata) || !('managedFields' in metadata)) return obj
  const { managedFields: _omitted, ...rest } = metadata
  return { ...obj, metadata: rest }
}

export interface EventStart {
  level: AuditLevel
  auditID: string
  requestURI: string
  verb: string
  user: UserInfo
  sourceIPs: string[]
  userAgent: string | undefined
  objectRef: ObjectReference | undefined
  requestReceivedTimestamp: string
}

/** The event of one stage, its members in upstream's order and empty ones left out. */
export function auditEvent(start: EventStart, stage: AuditEvent['stage'], parts: Partial<AuditEvent>, stageTimestamp: string): AuditEvent {
  return {
    kind: 'Event',
    apiVersion: AUDIT_API_VERSION,
    level: start.level,
    auditID: start.auditID,
    stage,
    requestURI: start.requestURI,
    verb: start.verb,
    user: start.user,
    ...(parts.impersonatedUser ? { impersonatedUser: parts.impersonatedUser } : {}),
    ...(start.sourceIPs.length ? { sourceIPs: start.sourceIPs } : {}),
    ...(start.userAgent ? { userAgent: start.userAgent } : {}),
    ...(start.objectRef ? { objectRef: start.objectRef } : {}),
    ...(parts.responseStatus ? { responseStatus: parts.responseStatus } : {}),
    ...(parts.requestObject !== undefined ? { requestObject: parts.requestObject } : {}),
    ...(parts.responseObject !== undefined ? { responseObject: parts.responseObject } : {}),
    requestReceivedTimestamp: start.requestReceivedTimestamp,
    stageTimestamp,
    ...(parts.annotations && Object.keys(parts.annotations).length ? { annotations: parts.annotations } : {}),
  }
}

/** Go's `%q` for the printable text an event carries. */
const q = (text: string): string => JSON.stringify(text)

/** Upstream's one-line text form of an event (`--audit-log-format=legacy`). */
export function legacyEventLine(ev: AuditEvent): string {
  const quotedList = (values: readonly string[]): string => values.map(q).join(',')
  let username = '<none>'
  let groups = '<none>'
  if (ev.user.username) {
    username = ev.user.username
    if (ev.user.groups.length) groups = quotedList(ev.user.groups)
  }
  let asUser = '<self>'
  let asGroups = '<lookup>'
  if (ev.impersonatedUser) {
    asUser = ev.impersonatedUser.username
    if (ev.impersonatedUser.groups) asGroups = quotedList(ev.impersonatedUser.groups)
  }
  const namespace = ev.objectRef?.namespace || '<none>'
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>'
  const ip = ev.sourceIPs?.[0] ?? '<unknown>'
  const received = ev.requestReceivedTimestamp.replace(/\.?0+Z$/, 'Z')
  return (
    `${received} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} user=${q(username)} ` +
    `groups=${q(groups)} as=${q(asUser)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} ` +
    `uri=${q(ev.requestURI)} response="${response}"`
  )
}
