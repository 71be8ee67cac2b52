/**
 * The handlers behind the filter chain: version, health, OpenAPI,
 * discovery, and every resource path (handed to the registry).
 */
import type { Context, Hono } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { AGGREGATED_DISCOVERY_TYPE, wantsAggregatedDiscovery } from '../http/media-types.js'
import { jsonResponse } from '../http/respond.js'
import { notAcceptable, resourceNotFound } from '../http/status-error.js'
import { handleResource, type HandlerEnv } from '../registry/handlers.js'
import type { Catalogue } from '../resources/catalogue.js'
import {
  aggregatedDiscovery,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.js'
import { type HealthCheck, healthResponse } from './health.js'
import { StorageVersionHashes } from './storage-version-hash.js'
import { openApiDocument, openApiIndex } from './openapi.js'
import { openApiV2Document } from './openapi-v2.js'
import { type Metrics, METRICS_CONTENT_TYPE } from '../metrics/metrics.js'
import type { VersionInfo } from './version.js'

export interface RouteDeps {
  catalogue: Catalogue
  version: VersionInfo
  checks: { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] }
  metrics: Metrics
  handlerEnv: (user: HandlerEnv['user']) => HandlerEnv
}

function discoveryResponse(accept: string | undefined, catalogue: Catalogue, legacy: boolean, legacyBody: unknown) {
  if (!wantsAggregatedDiscovery(accept)) return jsonResponse(legacyBody, 200, { vary: 'Accept' })
  return new Response(JSON.stringify(aggregatedDiscovery(catalogue, legacy)), {
    headers: { 'content-type': AGGREGATED_DISCOVERY_TYPE, vary: 'Accept' },
  })
}

function openApiResponse(url: URL, catalogue: Catalogue): Response {
  const key = url.pathname.slice('/openapi/v3/'.length)
  const doc = openApiDocument(catalogue, key)
  if (!doc) throw resourceNotFound()
  const current = openApiIndex(catalogue).paths[key]?.serverRelativeURL ?? ''
  const hash = new URL(current, url).searchParams.get('hash') ?? ''
  const asked = url.searchParams.get('hash')
  if (asked && asked !== hash) return new Response(null, { status: 301, headers: { location: current } })
  const caching: Record<string, string> = asked
    ? { 'cache-control': 'public, immutable', expires: new Date(Date.now() + 365 * 86_400_000).toUTCString() }
    : { 'cache-control': 'no-cache, private' }
  return jsonResponse(doc, 200, { ...caching, etag: `"${hash}"` })
}

/**
 * `/openapi/v2` as JSON with an ETag. Clients that accept only the protobuf
 * form (gnostic's OpenAPIv2 message) get 406: the document has no protobuf
 * encoding here.
 */
function openApiV2Response(accept: string | undefined, ifNoneMatch: string | undefined, catalogue: Catalogue): Response {
  const accepted = (accept ?? '').split(',').map((a) => a.split(';')[0]!.trim())
  if (accepted.length > 0 && accepted[0] !== '' && !accepted.some((a) => a === 'application/json' || a === '*/*' || a === 'application/*'))
    throw notAcceptable(['application/json'])
  const { doc, etag } = openApiV2Document(catalogue)
  const quoted = `"${etag}"`
  if (ifNoneMatch === quoted) return new Response(null, { status: 304, headers: { etag: quoted } })
  return jsonResponse(doc, 200, { etag: quoted, vary: 'Accept' })
}

export function installRoutes(app: Hono<ChainEnv>, deps: RouteDeps): void {
  const { catalogue } = deps
  const storageVersionHashes = new StorageVersionHashes(catalogue)
  app.get('/version', () => jsonResponse(deps.version))
  app.get('/metrics', () => new Response(deps.metrics.render(), { headers: { 'content-type': METRICS_CONTENT_TYPE } }))
  for (const endpoint of ['healthz', 'livez', 'readyz'] as const) {
    const handler = (c: Context<ChainEnv>) => healthResponse(endpoint, deps.checks[endpoint], new URL(c.req.url))
    app.get(`/${endpoint}`, handler)
    app.get(`/${endpoint}/*`, handler)
  }
  app.get('/openapi/v2', (c) => openApiV2Response(c.req.header('accept'), c.req.header('if-none-match'), catalogue))
  app.get('/openapi/v3', () => jsonResponse(openApiIndex(catalogue)))
  app.get('/openapi/v3/*', (c) => openApiResponse(new URL(c.req.url), catalogue))

  app.get('/api', (c) => discoveryResponse(c.req.header('accept'), catalogue, true, apiVersions(new URL(c.req.url).host)))
  app.get('/api/:version', async (c) => {
    const body = apiResourceList(catalogue, '', c.req.param('version'), await storageVersionHashes.hashes())
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  })
  app.get('/apis', (c) => discoveryResponse(c.req.header('accept'), catalogue, false, apiGroupList(catalogue)))
  app.get('/apis/:group', (c) => {
    const body = apiGroupDocument(catalogue, c.req.param('group'))
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  })
  app.get('/apis/:group/:version', async (c) => {
    const body = apiResourceList(catalogue, c.req.param('group'), c.req.param('version'), await storageVersionHashes.hashes())
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  })

  const resource = (c: Context<ChainEnv>) => {
    const info = c.get('requestInfo')
    if (!info.isResourceRequest) throw resourceNotFound()
    return handleResource(c.req.raw, info, deps.handlerEnv(c.get('user')))
  }
  app.all('/api/*', resource)
  app.all('/apis/*', resource)
  app.notFound(() => {
    throw resourceNotFound()
  })
}
