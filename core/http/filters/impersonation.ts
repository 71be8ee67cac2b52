/**
 * Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): after
 * authentication, a request carrying `Impersonate-*` headers runs as the user
 * they name, once the authorizer has allowed the authenticated user the verb
 * `impersonate` on each thing named: `users`, `groups`, `uids`,
 * `serviceaccounts` (for `system:serviceaccount:<ns>:<name>`) and
 * `userextras/<key>`. The first refusal is a 403 naming it, as upstream's
 * filter answers; the headers are removed before the request goes on.
 */
import type { MiddlewareHandler } from 'hono'
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from '../../authn/authenticator.js'
import { type Attributes, type Authorizer, forbiddenMessage } from '../../authz/authorizer.js'
import { type HeaderLines, HeaderLinesByName } from '../../machinery/header-lines.js'
import type { UserInfo } from '../../machinery/object.js'
import { badRequest, forbidden } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'
import { appendAll } from '../../machinery/append-all.js'
import { TimeSlice } from '../../machinery/time-slice.js'

const USER = 'impersonate-user'
const GROUP = 'impersonate-group'
const UID = 'impersonate-uid'
const EXTRA_PREFIX = 'impersonate-extra-'
const PREFIX = 'impersonate-'
const AUTHENTICATION_GROUP = 'authentication.k8s.io'
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'

/** One thing asked for, as upstream's ObjectReference of it (kind, namespace, name, apiVersion, fieldPath). */
interface Impersonated {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID'
  namespace?: string
  name: string
  apiVersion?: string
  fieldPath?: string
}

/** Go's `%v` of an ObjectReference, for the message upstream sends when no user is named. */
function goText(r: Impersonated): string {
  return `{${[r.kind, r.namespace ?? '', r.name, '', r.apiVersion ?? '', '', r.fieldPath ?? ''].join(' ')}}`
}

/** `system:serviceaccount:<ns>:<name>` split as upstream's SplitUsername does: exactly two non-empty parts. */
function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':')
  if (parts.length !== 2) return undefined
  const [namespace = '', name = ''] = parts
  const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
  const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
  if (!dns.test(namespace) || namespace.length > 63 || !subdomain.test(name) || name.length > 253) return undefined
  return { namespace, name }
}

function extraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    return encoded
  }
}

/**
 * What the headers ask for, in upstream's order: user, groups, extras, uid. Throws 400 for anything without a user.
 * As upstream reads them, the user and the uid are their header's first line, and each line of a group or extra header is one value.
 */
function requested(headers: Headers, lines: HeaderLines | undefined): Impersonated[] {
  // One pass over the header names rather than a lookup per name: most requests have none of them.
  let user = ''
  let uid = ''
  let groups: string[] = []
  const extras: Impersonated[] = []
  let byName: HeaderLinesByName | undefined
  for (const [header] of headers) {
    if (!header.startsWith(PREFIX)) continue
    byName ??= new HeaderLinesByName(headers, lines, (name) => name.startsWith(PREFIX))
    if (header === USER) user = byName.first(USER)
    else if (header === GROUP) groups = byName.values(GROUP)
    else if (header === UID) uid = byName.first(UID)
    else if (header.startsWith(EXTRA_PREFIX)) {
      const key = extraKey(header.slice(EXTRA_PREFIX.length))
      for (const name of byName.values(header)) extras.push({ kind: 'UserExtra', name, apiVersion: `${AUTHENTICATION_GROUP}/v1`, fieldPath: key })
    }
  }
  const out: Impersonated[] = []
  if (user) {
    const sa = serviceAccountOf(user)
    out.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user })
  }
  for (const group of groups) out.push({ kind: 'Group', name: group })
  appendAll(out, extras)
  if (uid) out.push({ kind: 'UID', name: uid, apiVersion: `${AUTHENTICATION_GROUP}/v1` })
  if (out.length > 0 && !user) throw badRequest(`requested [${out.map(goText).join(' ')}] without impersonating a user`)
  return out
}

function attributesFor(requestor: UserInfo, r: Impersonated): Attributes {
  const base = { user: requestor, verb: 'impersonate', isResourceRequest: true, path: '', namespace: r.namespace ?? '', name: r.name, subresource: '' }
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'serviceaccounts' }
    case 'User':
      return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'users' }
    case 'Group':
      return { ...base, apiGroup: '', apiVersion: 'v1', resource: 'groups' }
    case 'UserExtra':
      return { ...base, apiGroup: AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'userextras', subresource: r.fieldPath ?? '' }
    case 'UID':
      return { ...base, apiGroup: AUTHENTICATION_GROUP, apiVersion: 'v1', resource: 'uids' }
  }
}

/** The user the allowed requests add up to, with system:authenticated (or system:unauthenticated) as upstream adds it. */
function impersonatedUser(asked: readonly Impersonated[], groupsGiven: boolean): UserInfo {
  let username = ''
  let uid = ''
  let groups: string[] = []
  const extra: Record<string, string[]> = {}
  for (const r of asked) {
    if (r.kind === 'ServiceAccount') {
      username = `${SERVICE_ACCOUNT_PREFIX}${r.namespace ?? ''}:${r.name}`
      // A service account's groups are fixed; given groups replace them.
      if (!groupsGiven) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace ?? ''}`]
    } else if (r.kind === 'User') username = r.name
    else if (r.kind === 'Group') groups.push(r.name)
    else if (r.kind === 'UserExtra') (extra[r.fieldPath ?? ''] ??= []).push(r.name)
    else uid = r.name
  }
  if (username !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP)
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP)
  const user: UserInfo = { username, groups }
  if (uid) user.uid = uid
  if (Object.keys(extra).length > 0) user.extra = extra
  return user
}

function removeImpersonationHeaders(headers: Headers): void {
  for (const name of [...headers.keys()]) {
    if (name === USER || name === GROUP || name === UID || name.startsWith(EXTRA_PREFIX)) headers.delete(name)
  }
}

export function impersonationFilter(authorizer: Authorizer): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const headers = c.req.raw.headers
    const asked = requested(headers, c.env?.connection?.headerLines)
    if (asked.length === 0) return next()
    const requestor = c.get('user')
    // Each thing asked for is authorized, as upstream's filter does: tens of thousands of groups and extras
    // (a megabyte of headers) are authorized in slices, other requests served between them.
    const slice = asked.length > 64 ? TimeSlice.startingNow() : undefined
    for (const r of asked) {
      const attrs = attributesFor(requestor, r)
      const { decision, reason } = await authorizer.authorize(attrs)
      if (decision !== 'allow') {
        throw forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, forbiddenMessage(attrs) + (reason ? `: ${reason}` : ''))
      }
      await slice?.pause()
    }
    const impersonated = impersonatedUser(asked, headers.has(GROUP))
    const audit = c.get('audit')
    if (audit) audit.impersonatedUser = impersonated
    c.set('user', impersonated)
    removeImpersonationHeaders(headers)
    await next()
  }
}
