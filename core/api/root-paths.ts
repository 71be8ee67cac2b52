/**
 * `GET /` and `/index.html`: the paths the server lists, as upstream's
 * index handler answers them (a RootPaths object, indented as Go's
 * MarshalIndent writes it, without a final newline): `/api` and `/apis`, every
 * served group and group/version (extension servers' too), each health check's
 * own path, and the server's endpoints. Upstream registers some paths unlisted
 * (`/debug/...`, the resource paths beneath a group/version); so does this.
 */
import type { Aggregator } from '../aggregator/aggregator.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import type { Catalogue } from '../resources/catalogue.js'
import { apiGroupList } from './discovery.js'

export interface RootPathSources {
  readonly catalogue: Catalogue
  readonly checks: { readonly healthz: readonly HealthCheck[]; readonly livez: readonly HealthCheck[]; readonly readyz: readonly HealthCheck[] }
  readonly aggregator?: Pick<Aggregator, 'groups'> | undefined
  /** Service-account issuer discovery is served (an https issuer). */
  readonly issuerDiscovery: boolean
  /** `--enable-logs-handler`. */
  readonly logs: boolean
}

const SERVER_ENDPOINTS = ['/api', '/api/v1', '/apis', '/apis/', '/metrics', '/metrics/slis', '/openapi/v2', '/openapi/v3', '/openapi/v3/', '/version']

export function rootPaths({ catalogue, checks, aggregator, issuerDiscovery, logs }: RootPathSources): string[] {
  const paths = new Set(SERVER_ENDPOINTS)
  const groups = [...apiGroupList(catalogue).groups, ...(aggregator?.groups() ?? []).map((g) => ({ name: g.name, versions: g.versions.map((v) => ({ groupVersion: `${v.group}/${v.version}` })) }))]
  for (const group of groups) {
    paths.add(`/apis/${group.name}`)
    for (const version of group.versions) paths.add(`/apis/${version.groupVersion}`)
  }
  for (const endpoint of ['healthz', 'livez', 'readyz'] as const) {
    paths.add(`/${endpoint}`)
    for (const check of checks[endpoint]) paths.add(`/${endpoint}/${check.name}`)
  }
  if (issuerDiscovery) ['/.well-known/openid-configuration', '/openid/v1/jwks'].forEach((p) => paths.add(p))
  if (logs) paths.add('/logs')
  // Go's sort.Strings: byte order, which for these ASCII paths is the code unit order of the default sort.
  return [...paths].sort()
}

/** The answer to `GET /`: 200 with the sorted paths. */
export function rootPathsResponse(paths: readonly string[]): Response {
  return new Response(JSON.stringify({ paths }, null, 2), { status: 200, headers: { 'content-type': 'application/json' } })
}
