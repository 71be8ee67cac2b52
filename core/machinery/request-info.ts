/**
 * Request info is computed once per request and read by everything
 * downstream: nothing re-parses the URL. Follows upstream's
 * RequestInfoFactory (`endpoints/request/requestinfo.go`).
 */

import { requiredValueInText } from './field-selector.js'

export type RequestVerb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection'
  | 'proxy'

export interface RequestInfo {
  isResourceRequest: boolean
  /** The URL path; for non-resource requests this is what authorization sees. */
  path: string
  /** Resource verbs as above; for non-resource requests the lowercase HTTP method. */
  verb: string
  apiPrefix: string
  apiGroup: string
  apiVersion: string
  namespace: string
  resource: string
  subresource: string
  name: string
  /** The path segments from the resource on. */
  parts: string[]
}

const API_PREFIXES = new Set(['api', 'apis'])
const GROUPLESS_PREFIXES = new Set(['api'])
const SPECIAL_VERBS = new Set(['proxy', 'watch'])
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize'])

const METHOD_VERBS: Record<string, RequestVerb> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
}

export class RequestInfoError extends Error {}

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  }
}

function isTruthyWatch(value: string | null): boolean {
  if (value === null) return false
  const v = value.toLowerCase()
  return v !== 'false' && v !== '0'
}

/**
 * The name a `metadata.name=<x>` (or `==`) field selector pins, as upstream's
 * request info takes it: the selector's exact match on the name, unescaped
 * (`a\,b` names `a,b`), when it is a valid path segment name. The list
 * handler filters by the same parsed value, so a list authorized for one
 * name returns that object alone.
 */
function nameFromFieldSelector(selector: string | null): string {
  if (!selector) return ''
  const name = requiredValueInText(selector, 'metadata.name')
  if (!name || name === '.' || name === '..' || name.includes('/') || name.includes('%')) return ''
  return name
}

/**
 * The path of a serialized URL (a Request's `url`), as `new URL(url).pathname`
 * gives it, without parsing the URL again on every request: a serialized
 * URL's path starts at the first `/` after its authority and ends at its
 * query or fragment.
 */
export function pathOfUrl(url: string): string {
  const authority = url.indexOf('//')
  const start = url.indexOf('/', authority < 0 ? 0 : authority + 2)
  if (start < 0) return '/'
  let end = url.indexOf('?', start)
  if (end < 0) end = url.length
  const fragment = url.indexOf('#', start)
  const path = url.slice(start, fragment >= 0 && fragment < end ? fragment : end)
  // A runtime may hand over a URL it did not serialize (Node's adapter keeps a plain path as it came);
  // the URL parser reads an escaped dot (`%2e`) as a dot segment and removes it.
  return path.includes('%') && /%2e/i.test(path) ? new URL(url).pathname : path
}

const HEX = /^[0-9a-fA-F]{2}$/
const utf8 = new TextEncoder()
const lenientUtf8 = new TextDecoder()

/**
 * The path with its percent-escapes decoded, as Go's URL.Path (which
 * upstream splits) holds it: `x%20y` names the object `x y`, and `%2F`
 * separates segments. A path with a malformed escape is kept as it came.
 */
export function unescapedPath(path: string): string {
  if (!path.includes('%')) return path
  const bytes: number[] = []
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!
    if (c === '%') {
      const hex = path.slice(i + 1, i + 3)
      if (!HEX.test(hex)) return path
      bytes.push(parseInt(hex, 16))
      i += 2
    } else if (c.charCodeAt(0) < 0x80) bytes.push(c.charCodeAt(0))
    else for (const b of utf8.encode(c)) bytes.push(b)
  }
  return lenientUtf8.decode(Uint8Array.from(bytes))
}

/**
 * Whether a path holds a `%` not followed by two hex digits: Go's server
 * cannot parse such a request line, and answers it with a bare 400 before
 * any handler (authentication included) runs.
 */
export function hasMalformedEscape(path: string): boolean {
  for (let i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
    if (!HEX.test(path.slice(i + 1, i + 3))) return true
  }
  return false
}

/**
 * The segments of a path as upstream splits it: the slashes at either end
 * dropped, every other one a separator, so `a//b` holds an empty segment.
 * Upstream serves no object by such a path; merging the slashes would serve
 * `/api/v1/namespaces/kube-system//secrets` as the Secrets a front proxy
 * judging the path as sent meant to keep from the caller.
 */
function pathSegments(path: string): string[] {
  let start = 0
  let end = path.length
  while (start < end && path.charCodeAt(start) === 0x2f) start++
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--
  return start === end ? [] : path.slice(start, end).split('/')
}

/** `url` may be a Request's serialized url; its query is then parsed only when `query` is not given. */
export function parseRequestInfo(method: string, url: URL | string, query?: URLSearchParams): RequestInfo {
  if (typeof url !== 'string') query ??= url.searchParams
  else query ??= new URL(url).searchParams
  const path = typeof url === 'string' ? pathOfUrl(url) : url.pathname
  let parts = pathSegments(unescapedPath(path))
  const info = nonResource(path, method)
  if (parts.length < 3 || !API_PREFIXES.has(parts[0] ?? '')) return info

  const apiPrefix = parts[0] ?? ''
  parts = parts.slice(1)
  let apiGroup = ''
  if (!GROUPLESS_PREFIXES.has(apiPrefix)) {
    if (parts.length < 3) return info
    apiGroup = parts[0] ?? ''
    parts = parts.slice(1)
  }
  const apiVersion = parts[0] ?? ''
  parts = parts.slice(1)

  let verb: string
  if (SPECIAL_VERBS.has(parts[0] ?? '')) {
    if (parts.length < 2) throw new RequestInfoError(`unable to determine kind and namespace from url, ${url}`)
    verb = parts[0] ?? ''
    parts = parts.slice(1)
  } else {
    verb = METHOD_VERBS[method.toUpperCase()] ?? ''
  }

  let namespace = ''
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] ?? ''
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] ?? '')) parts = parts.slice(2)
  }

  let resource = ''
  let name = ''
  let subresource = ''
  if (parts.length >= 3 && verb !== 'proxy') subresource = parts[2] ?? ''
  if (parts.length >= 2) name = parts[1] ?? ''
  if (parts.length >= 1) resource = parts[0] ?? ''

  if (!name && verb === 'get') {
    verb = isTruthyWatch(query.get('watch')) ? 'watch' : 'list'
    name = nameFromFieldSelector(query.get('fieldSelector'))
  }
  if (!name && verb === 'delete') verb = 'deletecollection'

  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource,
    subresource,
    name,
    parts,
  }
}

/**
 * Requests that may run past the request timeout (watches, proxies, logs,
 * exec), as upstream's BasicLongRunningRequestCheck: among the paths outside
 * the API, the profiles under /debug/pprof/ (a CPU profile runs for the
 * seconds it asks).
 */
export function isLongRunning(info: RequestInfo): boolean {
  if (!info.isResourceRequest) return info.path.startsWith('/debug/pprof/')
  if (info.verb === 'watch' || info.verb === 'proxy') return true
  return ['log', 'exec', 'attach', 'portforward', 'proxy'].includes(info.subresource)
}
