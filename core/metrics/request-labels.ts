/**
 * The labels kube-apiserver 1.32 puts on its request metrics, worked out as
 * its endpoints/metrics package does:
 *
 * - the verb comes from the HTTP method, not from the request info: POST,
 *   PUT, PATCH, DELETE (a collection's too), GET or LIST (by scope; HEAD
 *   counts as GET), WATCH for `?watch=` or a `/watch/` path, APPLY for an
 *   apply patch, CONNECT for the log, exec, attach, portforward and proxy
 *   subresources; any other method is `other`;
 * - the scope of a handled request is its route's: `resource` for a path
 *   with a name or any POST, `namespace` in a namespace, else `cluster`
 *   (a `metadata.name` field selector does not make a list a GET);
 * - requests that end before a handler (refused with 429, long-running
 *   counts) take the scope from the request info, where such a selector
 *   does name the object;
 * - `dry_run` is the distinct dryRun values sorted and joined, `invalid`
 *   when one of them is not `All`.
 */
import type { RequestInfo } from '../machinery/request-info.js'

/** upstream's APIServerComponent. */
export const APISERVER_COMPONENT = 'apiserver'

const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy'])
const REPORTED_VERBS = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH', 'WATCHLIST'])
const APPLY_PATCH = 'application/apply-patch+yaml'

/** The scope by the request info (upstream's CleanScope). */
export function cleanScope(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource'
  if (info.namespace !== '') return 'namespace'
  return info.isResourceRequest ? 'cluster' : ''
}

/** The scope of the route that serves a resource request (upstream's installer). */
export function routeScope(info: RequestInfo, method: string): string {
  if (!info.isResourceRequest) return ''
  // `parts` holds the resource, then the name the path gives (never one from a field selector).
  if (info.parts.length >= 2 || method.toUpperCase() === 'POST') return 'resource'
  return info.namespace !== '' ? 'namespace' : 'cluster'
}

/** GET and HEAD are a LIST outside one object (upstream's CanonicalVerb). */
function canonicalVerb(method: string, scope: string): string {
  const verb = method.toUpperCase()
  if (verb !== 'GET' && verb !== 'HEAD') return verb
  return scope !== 'resource' && scope !== '' ? 'LIST' : 'GET'
}

/** `?watch=` as a boolean query parameter reads it: present and neither `0` nor `false`. */
function asksToWatch(request: Request, query: URLSearchParams): boolean {
  if (request.method.toUpperCase() !== 'GET') return false
  const value = query.get('watch')
  return value !== null && value.toLowerCase() !== '0' && value.toLowerCase() !== 'false'
}

/**
 * The verb as upstream's access log and metrics name it (NormalizedVerb):
 * WATCH, APPLY and CONNECT told apart, any method kept as it is.
 */
export function normalizedVerb(info: RequestInfo, request: Request, scope: string, query: URLSearchParams): string {
  const method = canonicalVerb(request.method, scope)
  let verb = method
  // A `/watch/` path (the route's WATCH or WATCHLIST verb) is a watch whatever its scope.
  if (info.isResourceRequest && info.verb === 'watch') verb = 'WATCH'
  if (asksToWatch(request, query)) verb = 'WATCH'
  if (method === 'PATCH' && request.headers.get('content-type') === APPLY_PATCH) verb = 'APPLY'
  if (info.isResourceRequest && CONNECT_SUBRESOURCES.has(info.subresource)) verb = 'CONNECT'
  return verb
}

/** The metrics' verb label: the normalized verb, or `other` for a method upstream does not report. */
export function reportedVerb(info: RequestInfo, request: Request, scope: string, query: URLSearchParams): string {
  if (info.isResourceRequest && info.verb === 'watch') return 'WATCH'
  const verb = normalizedVerb(info, request, scope, query)
  return REPORTED_VERBS.has(verb) ? verb : 'other'
}

/** The `dry_run` label: the distinct values sorted and joined; any value but All makes it `invalid`. */
export function cleanDryRun(query: URLSearchParams): string {
  const values = query.getAll('dryRun')
  if (values.some((v) => v !== 'All')) return 'invalid'
  return [...new Set(values)].sort().join(',')
}

export interface RequestLabels {
  group: string
  version: string
  resource: string
  subresource: string
  scope: string
  component: string
}

/**
 * The non-resource paths upstream instruments, with the subresource and
 * component they are recorded under; any other path (`/version`,
 * `/metrics`, `/openapi/v2`, a health check's own path) is not recorded.
 */
export function nonResourceLabels(path: string, response: Response): RequestLabels | undefined {
  const labels = (subresource: string, component: string): RequestLabels => ({ group: '', version: '', resource: '', subresource, scope: '', component })
  if (path === '/healthz' || path === '/livez' || path === '/readyz') return labels(path, '')
  if (path === '/openapi/v3') return labels('openapi/v3', '')
  if (path.startsWith('/openapi/v3/')) return labels('openapi/v3/', '')
  // Only the aggregated discovery document is instrumented; the legacy group lists are not.
  if ((path === '/api' || path === '/apis') && response.headers.get('content-type')?.includes('as=APIGroupDiscoveryList')) {
    return labels(path.slice(1), APISERVER_COMPONENT)
  }
  return undefined
}

/**
 * The server's own top-level paths: a termination of a request for one of
 * these is labelled with its path, as upstream labels every path.
 */
const TERMINATION_PATHS = new Set([
  '/',
  '/api',
  '/apis',
  '/healthz',
  '/livez',
  '/readyz',
  '/version',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/.well-known/openid-configuration',
  '/openid/v1/jwks',
])

/**
 * The `subresource` label of a non-resource request's termination. A 429 is
 * given before authorization, so any caller picks the path: any other path is
 * left empty, or each would grow a series that is never freed.
 */
export function terminationPath(path: string): string {
  return TERMINATION_PATHS.has(path) ? path : ''
}

/** A handled resource request's labels (its route's scope). */
export function resourceLabels(info: RequestInfo, scope: string): RequestLabels {
  return { group: info.apiGroup, version: info.apiVersion, resource: info.resource, subresource: info.subresource, scope, component: APISERVER_COMPONENT }
}
