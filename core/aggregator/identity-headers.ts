/**
 * The caller's identity as the aggregator hands it to an extension server:
 * in the request-header names the server publishes (the first of each
 * `--requestheader-*` list, upstream's X-Remote-* when none is set), believed
 * by the extension server only because the connection presents the proxy
 * client certificate. Whatever identity or credential the caller sent is
 * removed first: its Authorization, impersonation headers and any header
 * that looks like one of these.
 */
import type { RequestHeaderOptions } from '../authn/authentication-options.js'
import type { UserInfo } from '../machinery/object.js'

export interface IdentityHeaderNames {
  user: string
  group: string
  /** Set only when `--requestheader-uid-headers` names one (upstream sends the UID behind a feature gate). */
  uid?: string
  extraPrefix: string
}

export function identityHeaderNames(options: RequestHeaderOptions | undefined): IdentityHeaderNames {
  const first = (names: readonly string[] | undefined, fallback: string): string => names?.find((n) => n.trim())?.trim() ?? fallback
  const uid = options?.uidHeaders?.find((n) => n.trim())?.trim()
  return {
    user: first(options?.usernameHeaders, 'X-Remote-User'),
    group: first(options?.groupHeaders, 'X-Remote-Group'),
    ...(uid ? { uid } : {}),
    extraPrefix: first(options?.extraHeaderPrefixes, 'X-Remote-Extra-'),
  }
}

/** Every header name or prefix that could carry an identity, lower case. */
function identityNames(options: RequestHeaderOptions | undefined, names: IdentityHeaderNames): { exact: Set<string>; prefixes: string[] } {
  const lower = (list: readonly string[] | undefined) => (list ?? []).map((n) => n.trim().toLowerCase()).filter(Boolean)
  const exact = new Set([
    'authorization',
    'x-remote-user',
    'x-remote-group',
    'x-remote-uid',
    names.user.toLowerCase(),
    names.group.toLowerCase(),
    ...(names.uid ? [names.uid.toLowerCase()] : []),
    ...lower(options?.usernameHeaders),
    ...lower(options?.groupHeaders),
    ...lower(options?.uidHeaders),
  ])
  const prefixes = ['impersonate-', 'x-remote-extra-', names.extraPrefix.toLowerCase(), ...lower(options?.extraHeaderPrefixes)]
  return { exact, prefixes }
}

/** Removes the caller's credentials and identity claims from `headers` (in place). */
export function stripIdentity(headers: Headers, options: RequestHeaderOptions | undefined, names: IdentityHeaderNames): void {
  const { exact, prefixes } = identityNames(options, names)
  for (const name of [...headers.keys()]) {
    if (exact.has(name) || prefixes.some((p) => name.startsWith(p))) headers.delete(name)
  }
}

/** The header lines that carry `user`, one line per group and per extra value. */
export function identityHeaderLines(user: UserInfo, names: IdentityHeaderNames): [string, string][] {
  const lines: [string, string][] = [[names.user, user.username]]
  if (names.uid && user.uid) lines.push([names.uid, user.uid])
  for (const group of user.groups) lines.push([names.group, group])
  for (const [key, values] of Object.entries(user.extra ?? {})) {
    // Keys are %-escaped, as upstream escapes what a header name cannot hold.
    for (const value of values) lines.push([names.extraPrefix + encodeURIComponent(key), value])
  }
  return lines
}
