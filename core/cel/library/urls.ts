/**
 * Kubernetes' URL library (apiserver/pkg/cel/library/urls.go): `url(s)`,
 * `isURL(s)` and the URL's getScheme, getHost, getHostname, getPort,
 * getEscapedPath and getQuery. A URL is what Go's url.ParseRequestURI
 * accepts: an absolute URI whose scheme is followed by a path or an
 * authority, or an absolute path.
 */
import type { Environment } from '@marcbachmann/cel-js'

export class ParsedURL {
  constructor(
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly rawQuery: string,
  ) {}
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/

/** Go's url.ParseRequestURI, or its reason for refusing `text`. */
export function parseURL(text: string): ParsedURL | string {
  const refuse = (why: string) => `parse ${JSON.stringify(text)}: ${why}`
  if (text === '') return refuse('empty url')
  if (/[\x00-\x1f\x7f ]/.test(text)) return refuse('invalid character in URL')
  let rest = text
  let scheme = ''
  if (!rest.startsWith('/')) {
    const m = SCHEME.exec(rest)
    if (!m) return refuse('invalid URI for request')
    scheme = (m[1] ?? '').toLowerCase()
    rest = rest.slice(m[0].length)
    if (!rest.startsWith('/')) return refuse('invalid URI for request')
  }
  const q = rest.indexOf('?')
  const rawQuery = q >= 0 ? rest.slice(q + 1) : ''
  rest = q >= 0 ? rest.slice(0, q) : rest
  let host = ''
  if (scheme && rest.startsWith('//')) {
    const end = rest.indexOf('/', 2)
    const authority = end >= 0 ? rest.slice(2, end) : rest.slice(2)
    rest = end >= 0 ? rest.slice(end) : ''
    host = authority.slice(authority.lastIndexOf('@') + 1)
    if (host.startsWith('[') ? !/^\[[0-9a-fA-F:.]+(%[^\]]+)?\](:\d*)?$/.test(host) : /[[\]]/.test(host)) return refuse('invalid host')
    if (!host.startsWith('[') && (host.match(/:/g) ?? []).length > 1) return refuse('invalid port after host')
    const port = /:([^:\]]*)$/.exec(host)?.[1]
    if (port !== undefined && !/^\d*$/.test(port)) return refuse(`invalid port ${JSON.stringify(`:${port}`)} after host`)
  }
  if (BAD_ESCAPE.test(rest)) return refuse('invalid URL escape')
  return new ParsedURL(scheme, host, rest, rawQuery)
}

function url(text: string): ParsedURL {
  const parsed = parseURL(text)
  if (typeof parsed === 'string') throw new Error(`URL parse error during conversion from string: ${parsed}`)
  return parsed
}

function hostname(u: ParsedURL): string {
  if (u.host.startsWith('[')) return u.host.slice(1, u.host.indexOf(']'))
  const colon = u.host.indexOf(':')
  return colon >= 0 ? u.host.slice(0, colon) : u.host
}

function port(u: ParsedURL): string {
  const m = /:(\d*)$/.exec(u.host.startsWith('[') ? u.host.slice(u.host.indexOf(']')) : u.host)
  return m?.[1] ?? ''
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

/** Go's url.ParseQuery: pairs with undecodable parts are dropped. */
function query(u: ParsedURL): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const pair of u.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue
    const eq = pair.indexOf('=')
    const key = decode(eq >= 0 ? pair.slice(0, eq) : pair)
    const value = decode(eq >= 0 ? pair.slice(eq + 1) : '')
    if (key === undefined || value === undefined) continue
    out.set(key, [...(out.get(key) ?? []), value])
  }
  return out
}

export function registerURLs(env: Environment): Environment {
  return env
    .registerType('net.URL', ParsedURL)
    .registerFunction('url(string): net.URL', url)
    .registerFunction('isURL(string): bool', (s: string) => typeof parseURL(s) !== 'string')
    .registerFunction('net.URL.getScheme(): string', (u: ParsedURL) => u.scheme)
    .registerFunction('net.URL.getHost(): string', (u: ParsedURL) => u.host)
    .registerFunction('net.URL.getHostname(): string', hostname)
    .registerFunction('net.URL.getPort(): string', port)
    .registerFunction('net.URL.getEscapedPath(): string', (u: ParsedURL) => u.path)
    .registerFunction('net.URL.getQuery(): map<string, list<string>>', query)
}
