/**
 * URLs read the way Go's net/url.Parse reads them. Several config fields are
 * checked upstream by url.Parse (the KMS plugin endpoint, the tracing
 * collector endpoint, a kubeconfig's server and proxy-url), and a file must be
 * refused here exactly when it is refused there, with the same words
 * (`parse "x": first path segment in URL cannot contain colon`). The WHATWG
 * URL parser accepts and refuses different strings, so it cannot stand in.
 */

export interface GoUrl {
  /** Lower-cased, as Go stores it; empty for a relative reference. */
  scheme: string
  /** The part after `scheme:` when it does not start with `/` (`mailto:x`). */
  opaque: string
  /** `user[:password]` before `@`, still escaped. */
  userinfo?: string
  /** `host[:port]`, brackets kept around an IPv6 literal. */
  host: string
  /** Unescaped. */
  path: string
  rawQuery: string
  fragment: string
}

export class GoUrlError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`parse ${JSON.stringify(url)}: ${reason}`)
    this.name = 'GoUrlError'
  }
}

// Characters allowed unescaped in a host (RFC 3986 unreserved and sub-delims, plus the few Go lets through).
const HOST_CHAR = /[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]/

/** Go's url.Parse: returns the parts, or throws GoUrlError with Go's reason. */
export function parseGoUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#')
  const beforeFragment = hash < 0 ? raw : raw.slice(0, hash)
  const fail = (reason: string): never => {
    throw new GoUrlError(beforeFragment, reason)
  }
  // Go refuses ASCII control characters anywhere, the fragment included.
  if (/[\x00-\x1f\x7f]/.test(beforeFragment)) fail('net/url: invalid control character in URL')
  const url: GoUrl = { scheme: '', opaque: '', host: '', path: '', rawQuery: '', fragment: '' }
  if (beforeFragment === '*') return { ...url, path: '*' }

  let rest = beforeFragment
  const scheme = /^[A-Za-z][A-Za-z0-9+\-.]*:/.exec(rest)
  if (rest.startsWith(':')) fail('missing protocol scheme')
  if (scheme) {
    url.scheme = scheme[0].slice(0, -1).toLowerCase()
    rest = rest.slice(scheme[0].length)
  }
  const question = rest.indexOf('?')
  if (question >= 0) {
    url.rawQuery = rest.slice(question + 1)
    rest = rest.slice(0, question)
  }
  if (!rest.startsWith('/')) {
    if (url.scheme) return { ...url, opaque: rest, fragment: fragmentOf(raw, hash) }
    // RFC 3986 section 3.3: the first segment of a relative path cannot hold a colon.
    if ((rest.split('/')[0] ?? '').includes(':')) fail('first path segment in URL cannot contain colon')
  }
  if ((url.scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2)
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash)
    rest = slash < 0 ? '' : rest.slice(slash)
    const at = authority.lastIndexOf('@')
    if (at >= 0) {
      url.userinfo = authority.slice(0, at)
      if (!/^[A-Za-z0-9\-._~!$&'()*+,;=:%@]*$/.test(url.userinfo)) fail('net/url: invalid userinfo')
      unescape(url.userinfo, fail)
    }
    url.host = parseHost(authority.slice(at + 1), fail)
  }
  url.path = unescape(rest, fail)
  url.fragment = fragmentOf(raw, hash)
  return url
}

function fragmentOf(raw: string, hash: number): string {
  if (hash < 0) return ''
  // Go names the whole text, fragment included, when the fragment is malformed.
  return unescape(raw.slice(hash + 1), (reason) => {
    throw new GoUrlError(raw, reason)
  })
}

function parseHost(host: string, fail: (reason: string) => never): string {
  let port = ''
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']')
    if (close < 0) fail("missing ']' in host")
    port = host.slice(close + 1)
  } else if (host.includes(':')) {
    port = host.slice(host.lastIndexOf(':'))
  }
  if (port !== '' && !/^:\d*$/.test(port)) fail(`invalid port ${JSON.stringify(port)} after host`)
  for (const c of host) {
    if (c !== '%' && c.charCodeAt(0) < 0x80 && !HOST_CHAR.test(c)) fail(`invalid character ${JSON.stringify(c)} in host name`)
  }
  unescape(host, fail)
  return host
}

/** Percent-decoding with Go's refusal of a `%` not followed by two hex digits. */
function unescape(text: string, fail: (reason: string) => never): string {
  const bad = /%(?![0-9A-Fa-f]{2})/.exec(text)
  if (bad) fail(`invalid URL escape ${JSON.stringify(text.slice(bad.index, bad.index + 3))}`)
  const encoder = new TextEncoder()
  const bytes = text
    .split(/(%[0-9A-Fa-f]{2})/)
    .flatMap((part) => (/^%[0-9A-Fa-f]{2}$/.test(part) ? [parseInt(part.slice(1), 16)] : [...encoder.encode(part)]))
  return new TextDecoder().decode(new Uint8Array(bytes))
}
