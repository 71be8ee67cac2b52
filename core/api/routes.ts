/**
 * The handlers behind the filter chain: version, health, OpenAPI,
 * discovery, and every resource path (handed to the registry).
 */
import type { Context, Hono } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { AGGREGATED_DISCOVERY_TYPE, wantsAggregatedDiscovery } from '../http/media-types.js'
import { jsonResponse, versionResponse } from '../http/respond.js'
import { resourceNotFound } from '../http/status-error.js'
import { handleResource, type HandlerEnv } from '../registry/handlers.js'
import type { Catalogue } from '../resources/catalogue.js'
import {
  aggregatedDiscovery,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.js'
import { JWKS_PATH, OPENID_CONFIG_PATH, type IssuerDiscovery } from '../authn/serviceaccount/issuer-discovery.js'
import { type HealthCheck, healthResponse } from './health.js'
import { openApiIndexResponse, openApiV2Response, openApiV3Response } from './openapi-responses.js'
import { StorageVersionHashes } from './storage-version-hash.js'
import { type Metrics, METRICS_CONTENT_TYPE } from '../metrics/metrics.js'
import type { VersionInfo } from './version.js'

export interface RouteDeps {
  catalogue: Catalogue
  version: VersionInfo
  checks: { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] }
  metrics: Metrics
  handlerEnv: (user: HandlerEnv['user']) => HandlerEnv
  /** Service-account issuer discovery, when tokens are issued; its documents are absent (404) for a non-https issuer. */
  issuerDiscovery?: { discovery(): Promise<IssuerDiscovery | undefined> } | undefined
}

function discoveryResponse(accept: string | undefined, catalogue: Catalogue, legacy: boolean, legacyBody: Record<string, unknown>) {
  if (!wantsAggregatedDiscovery(accept)) return jsonResponse(legacyBody, 200, { vary: 'Accept' })
  return jsonResponse(aggregatedDiscovery(catalogue, legacy), 200, { 'content-type': AGGREGATED_DISCOVERY_TYPE, vary: 'Accept' })
}

export function installRoutes(app: Hono<ChainEnv>, deps: RouteDeps): void {
  const { catalogue } = deps
  const storageVersionHashes = new StorageVersionHashes(catalogue)
  app.get('/version', () => versionResponse(deps.version))
  app.get('/metrics', () => new Response(deps.metrics.render(), { headers: { 'content-type': METRICS_CONTENT_TYPE } }))
  for (const endpoint of ['healthz', 'livez', 'readyz'] as const) {
    const handler = (c: Context<ChainEnv>) => healthResponse(endpoint, deps.checks[endpoint], new URL(c.req.url))
    app.get(`/${endpoint}`, handler)
    app.get(`/${endpoint}/*`, handler)
  }
  const issuer = deps.issuerDiscovery
  if (issuer) {
    const serve = async (pick: (d: IssuerDiscovery) => Response): Promise<Response> => {
      const discovery = await issuer.discovery()
      if (!discovery) throw resourceNotFound()
      return pick(discovery)
    }
    app.get(OPENID_CONFIG_PATH, () => serve((d) => d.configuration()))
    app.get(JWKS_PATH, () => serve((d) => d.keySet()))
  }
  app.get('/openapi/v2', (c) => openApiV2Response(c.req.header('accept'), c.req.header('if-none-match'), catalogue))
  app.get('/openapi/v3', () => openApiIndexResponse(catalogue))
  app.get('/openapi/v3/*', (c) => openApiV3Response(new URL(c.req.url), catalogue))

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
    const env = deps.handlerEnv(c.get('user'))
    // Admission plugins annotate the request's audit event (PodSecurity's audit mode) through it.
    const audit = c.get('audit')
    return handleResource(c.req.raw, info, audit ? { ...env, auditAnnotations: audit.annotations } : env)
  }
  app.all('/api/*', resource)
  app.all('/apis/*', resource)
  app.notFound(() => {
    throw resourceNotFound()
  })
}
