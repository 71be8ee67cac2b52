/**
 * The authenticating proxy (`--requestheader-*`), upstream's request-header
 * authenticator behind its x509 verifier: the identity a proxy puts in its
 * headers is believed only when the connection's client certificate was
 * verified against the front-proxy CA and its common name is allowed. The
 * identity headers are removed from every request, trusted or not, so that
 * nothing after authentication can mistake a client's own header for the
 * proxy's word.
 */
import type { RequestHeaderOptions } from './authentication-options.js'
import { appendAll } from '../machinery/append-all.js'
import { type HeaderLines, HeaderLinesByName } from '../machinery/header-lines.js'
import type { UserInfo } from '../machinery/object.js'
import type { Authenticator } from './authenticator.js'

const lower = (names: readonly string[] | undefined): string[] => (names ?? []).map((n) => n.trim().toLowerCase()).filter(Boolean)

/** Every non-empty line of a header, as upstream's request-header authenticator takes them. */
function headerValues(lines: HeaderLinesByName, name: string): string[] {
  return lines.values(name).filter(Boolean)
}

/** The part of a header name after the prefix, %-decoded as upstream does (undecodable keys are kept as sent). */
function extraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    return encoded
  }
}

export interface RequestHeaderAuthenticator extends Authenticator {
  /** Removes the identity headers (what upstream's ClearAuthenticationHeaders does). */
  clearHeaders(headers: Headers): void
}

export function requestHeaderAuthenticator(opts: RequestHeaderOptions): RequestHeaderAuthenticator {
  const usernameHeaders = lower(opts.usernameHeaders)
  const groupHeaders = lower(opts.groupHeaders)
  const uidHeaders = lower(opts.uidHeaders)
  const prefixes = lower(opts.extraHeaderPrefixes)
  const allowedNames = new Set(opts.allowedNames ?? [])

  const identityHeader = (name: string): boolean =>
    usernameHeaders.includes(name) || groupHeaders.includes(name) || uidHeaders.includes(name) || prefixes.some((p) => name.startsWith(p))
  // The first header of `names` that has a non-empty first line, that line: upstream's headerValue.
  const first = (lines: HeaderLinesByName, names: readonly string[]): string => names.map((n) => lines.first(n)).find((v) => v.length > 0) ?? ''

  const clearHeaders = (headers: Headers): void => {
    const names = [...usernameHeaders, ...groupHeaders, ...uidHeaders]
    for (const name of [...headers.keys()]) if (prefixes.some((p) => name.startsWith(p))) names.push(name)
    for (const name of names) headers.delete(name)
  }

  const identity = (headers: Headers, headerLines: HeaderLines | undefined): UserInfo | undefined => {
    const lines = new HeaderLinesByName(headers, headerLines, identityHeader)
    const username = first(lines, usernameHeaders)
    if (!username) return undefined
    const user: UserInfo = { username, groups: groupHeaders.flatMap((n) => headerValues(lines, n)) }
    const uid = first(lines, uidHeaders)
    if (uid) user.uid = uid
    const extra: Record<string, string[]> = {}
    // Prefixes first, so that each key's values keep the order of the prefixes as upstream's do.
    for (const prefix of prefixes) {
      for (const [name] of headers) {
        if (!name.startsWith(prefix)) continue
        appendAll((extra[extraKey(name.slice(prefix.length))] ??= []), headerValues(lines, name))
      }
    }
    if (Object.keys(extra).length > 0) user.extra = extra
    return user
  }

  return {
    clearHeaders,
    authenticate(request, connection) {
      const headers = request.headers
      const cert = connection.clientCertificate
      // The headers are read only for a proxy the certificate proves, as upstream's verifier runs first:
      // anyone else's headers cost no more than their removal.
      const trusted = cert?.verifiedByRequestHeaderCA === true && (allowedNames.size === 0 || allowedNames.has(cert.commonName))
      const user = trusted ? identity(headers, connection.headerLines) : undefined
      clearHeaders(headers)
      // No certificate: nothing of this kind, whatever the headers say.
      if (!cert) return undefined
      // Errors here do not end the chain: the same certificate may still be a client-CA user.
      if (!cert.verifiedByRequestHeaderCA) return { error: 'verifying certificate failed: not signed by the request-header CA' }
      if (allowedNames.size > 0 && !allowedNames.has(cert.commonName))
        return { error: `x509: subject with cn=${cert.commonName} is not in the allowed list` }
      return user ? { user } : undefined
    },
  }
}
