/**
 * The handlers behind the filter chain: version, health, OpenAPI,
 * discovery, and every resource path (handed to the registry).
 */
import type { Context, Hono } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { AGGREGATED_DISCOVERY_TYPE, wantsAggregatedDiscovery } from '../http/media-types.js'
import { jsonResponse, sizedResponse, versionResponse } from '../http/respond.js'
import { resourceNotFound } from '../machinery/status-error.js'
import { handleResource, type HandlerEnv } from '../endpoints/handlers.js'
import type { Catalogue } from '../resources/catalogue.js'
import {
  aggregatedDiscovery,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.js'
import { JWKS_PATH, OPENID_CONFIG_PATH, type IssuerDiscovery } from '../authn/serviceaccount/issuer-discovery.js'
import { healthResponse } from './health.js'
import { rootPaths, rootPathsResponse } from './root-paths.js'
import { observeHealthcheck } from '../metrics/slis.js'
import type { HealthCheck } from '../lifecycle/health-check.js'
import { openApiIndexResponse, openApiV2Response, openApiV3Response } from './openapi-responses.js'
import { DiscoveryMemo } from './discovery-memo.js'
import { StorageVersionHashes } from './storage-version-hash.js'
import { type Metrics, METRICS_CONTENT_TYPE } from '../metrics/metrics.js'
import type { RuntimeMetrics } from '../ports.js'
import type { VersionInfo } from './version.js'
import type { Aggregator } from '../aggregator/aggregator.js'
import { aggregatedRemoteGroup, remoteApiGroup } from '../aggregator/remote-discovery.js'
import { peerProxyMiddleware, type PeerProxyDeps } from '../peers/peer-proxy.js'
import type { Tracer } from '@opentelemetry/api'
import { withHandlerSpan } from '../tracing/handler-span.js'

/** What a request's handler env holds of the request itself (the rest is the server's). */
export type RequestParts = Pick<HandlerEnv, 'user' | 'auditAnnotations' | 'auditRequestObject' | 'authWarnings' | 'passUpgrade' | 'remoteAddress'>

export interface RouteDeps {
  catalogue: Catalogue
  version: VersionInfo
  checks: { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] }
  metrics: Metrics
  /** The health check SLIs (`/metrics/slis`). */
  slis: Metrics
  /** The runtime's own metrics, appended to the server's. */
  runtimeMetrics?: RuntimeMetrics | undefined
  /** Where clients reach the server (`--external-hostname` or `--advertise-address`, and the port); unset: the host a request asked for. */
  externalAddress?: () => string
  /** The handlers' env for one request: the server's settings with the request's own parts. */
  handlerEnv: (request: RequestParts) => HandlerEnv
  /** Service-account issuer discovery, when tokens are issued; its documents are absent (404) for a non-https issuer. */
  issuerDiscovery?: { discovery(): Promise<IssuerDiscovery | undefined> } | undefined
  /** API aggregation: group/versions served by extension servers, proxied and listed in discovery. */
  aggregator?: Pick<Aggregator, 'remote' | 'groups' | 'discoveryOf' | 'proxy' | 'openApi'>
  /** The peer proxy: resources only a peer serves are answered by it. */
  peers?: Pick<PeerProxyDeps, 'directory' | 'forward'>
  /** Starts the handlers' spans (`Create`, `Get`, ...) under the request's span; absent, tracing is off. */
  tracer?: Tracer | undefined
  /** `/logs` is served (`--enable-logs-handler`), and so listed at `/`. */
  logs?: boolean
}

function discoveryResponse(
  accept: string | undefined,
  memo: DiscoveryMemo,
  catalogue: Catalogue,
  legacy: boolean,
  legacyBody: Record<string, unknown>,
  aggregator: RouteDeps['aggregator'],
) {
  const remote = legacy ? [] : (aggregator?.groups() ?? [])
  if (!wantsAggregatedDiscovery(accept)) {
    // Aggregated groups follow the server's own in `/apis`.
    const body = remote.length ? { ...legacyBody, groups: [...(legacyBody['groups'] as unknown[]), ...remote.map(remoteApiGroup)] } : legacyBody
    return jsonResponse(body, 200, { vary: 'Accept' })
  }
  const local = memo.of(legacy ? 'aggregated /api' : 'aggregated /apis', () => aggregatedDiscovery(catalogue, legacy))!
  const body = remote.length ? { ...local, items: [...local.items, ...remote.map((g) => aggregatedRemoteGroup(g, (api) => aggregator?.discoveryOf(api)))] } : local
  return jsonResponse(body, 200, { 'content-type': AGGREGATED_DISCOVERY_TYPE, vary: 'Accept' })
}

export function installRoutes(app: Hono<ChainEnv>, deps: RouteDeps): void {
  const { catalogue, aggregator } = deps
  if (deps.peers) {
    // After authentication, audit and authorization, as the aggregator's proxy; what this server serves stays here.
    const peerProxy = peerProxyMiddleware({
      ...deps.peers,
      servedHere: (group, version, resource) => catalogue.lookup(group, version, resource) !== undefined || aggregator?.remote(group, version) !== undefined,
    })
    app.use('/api/*', peerProxy)
    app.use('/apis/*', peerProxy)
  }
  if (aggregator) {
    // After authentication, audit and authorization, before any handler of the server's own: an aggregated
    // group/version's whole path (its discovery document too) belongs to its extension server.
    app.use('/apis/*', async (c, next) => {
      const [, , group, version] = new URL(c.req.url).pathname.split('/')
      if (!group) return next()
      if (!version) {
        const remote = catalogue.entries.some((e) => e.group === group) ? undefined : aggregator.groups().find((g) => g.name === group)
        return remote ? jsonResponse({ kind: 'APIGroup', apiVersion: 'v1', ...remoteApiGroup(remote) }) : next()
      }
      const api = aggregator.remote(group, version)
      if (!api) return next()
      c.set('relayed', true)
      return aggregator.proxy(c.req.raw, api, c.get('user'), c.get('deadline')?.(), c.env?.connection?.remoteAddress)
    })
  }
  const storageVersionHashes = new StorageVersionHashes(catalogue)
  const memo = new DiscoveryMemo(catalogue)
  // go-restful serves /version/ too (the public-info-viewer role names both).
  app.get('/version', () => versionResponse(deps.version))
  app.get('/version/', () => versionResponse(deps.version))
  // Any method reads them, as upstream's Prometheus handler answers any; with profiling on, DELETE resets them instead (wiring/serving.ts).
  app.all('/metrics', async () => {
    const runtime = (await deps.runtimeMetrics?.render().catch(() => '')) ?? ''
    return sizedResponse(deps.metrics.render() + runtime, { headers: { 'content-type': METRICS_CONTENT_TYPE } })
  })
  // The health check SLIs, a registry of their own as upstream's (DELETE resets them with profiling on, as /metrics).
  app.all('/metrics/slis', () => sizedResponse(deps.slis.render(), { headers: { 'content-type': METRICS_CONTENT_TYPE } }))
  for (const endpoint of ['healthz', 'livez', 'readyz'] as const) {
    const observe = (check: string, passed: boolean): void => observeHealthcheck(deps.slis, check, endpoint, passed)
    const handler = (c: Context<ChainEnv>) => healthResponse(endpoint, deps.checks[endpoint], new URL(c.req.url), observe)
    app.get(`/${endpoint}`, handler)
    app.get(`/${endpoint}/*`, handler)
  }
  // The index of the paths the server lists, as upstream's (cluster administrators may read it; RBAC's roles name no `/`).
  const index = async () => {
    const issuerDiscovery = (await deps.issuerDiscovery?.discovery()) !== undefined
    return rootPathsResponse(rootPaths({ catalogue, checks: deps.checks, aggregator, issuerDiscovery, logs: deps.logs === true }))
  }
  app.get('/', index)
  app.get('/index.html', index)
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
  app.get('/openapi/v2', (c) => openApiV2Response(c.req.header('accept'), c.req.header('if-none-match'), catalogue, aggregator?.openApi))
  app.get('/openapi/v3', () => openApiIndexResponse(catalogue, aggregator?.openApi))
  app.get('/openapi/v3/*', (c) => openApiV3Response(new URL(c.req.url), catalogue, aggregator?.openApi))

  // Each discovery document is also served with a trailing slash, as upstream's are: `/api/...` and the
  // group versions through go-restful, which matches a path without its trailing slash, `/apis/` and
  // `/apis/<group>/` by the handlers the aggregator registers for them. `/apis/` is the aggregator's plain
  // list (APIGroupList, never the aggregated document); authorization saw the path as sent.
  const legacyRoot = (c: Context<ChainEnv>) =>
    discoveryResponse(c.req.header('accept'), memo, catalogue, true, apiVersions(deps.externalAddress?.() ?? new URL(c.req.url).host), aggregator)
  const legacyVersion = async (c: Context<ChainEnv>) => {
    const version = c.req.param('version') ?? ''
    const hashes = await storageVersionHashes.hashes()
    const body = memo.of(`/api/${version}`, () => apiResourceList(catalogue, '', version, hashes))
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  }
  const group = (c: Context<ChainEnv>) => {
    const name = c.req.param('group') ?? ''
    const body = memo.of(`/apis/${name}`, () => apiGroupDocument(catalogue, name))
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  }
  const groupVersion = async (c: Context<ChainEnv>) => {
    const [name, version] = [c.req.param('group') ?? '', c.req.param('version') ?? '']
    const hashes = await storageVersionHashes.hashes()
    const body = memo.of(`/apis/${name}/${version}`, () => apiResourceList(catalogue, name, version, hashes))
    if (!body) throw resourceNotFound()
    return jsonResponse(body)
  }
  app.get('/api', legacyRoot)
  app.get('/api/', legacyRoot)
  app.get('/api/:version', legacyVersion)
  app.get('/api/:version/', legacyVersion)
  const groupList = () => memo.of('/apis', () => apiGroupList(catalogue))!
  app.get('/apis', (c) => discoveryResponse(c.req.header('accept'), memo, catalogue, false, groupList(), aggregator))
  app.get('/apis/', () => discoveryResponse(undefined, memo, catalogue, false, groupList(), aggregator))
  app.get('/apis/:group', group)
  app.get('/apis/:group/', group)
  app.get('/apis/:group/:version', groupVersion)
  app.get('/apis/:group/:version/', groupVersion)

  const resource = (c: Context<ChainEnv>) => {
    const info = c.get('requestInfo')
    if (!info.isResourceRequest) throw resourceNotFound()
    // A node agent's, a pod's or a service's own answer, passed on as it came.
    if (info.subresource === 'proxy') c.set('relayed', true)
    // Admission's audit annotations and the object a write decoded go to the request's audit event.
    const audit = c.get('audit')
    const connection = c.env?.connection
    const env = deps.handlerEnv({
      user: c.get('user'),
      auditAnnotations: audit?.annotations,
      auditRequestObject: audit?.requestObjectDecoded,
      authWarnings: c.get('authNotes')?.warnings,
      passUpgrade: connection?.passUpgrade,
      remoteAddress: connection?.remoteAddress,
    })
    const request = c.req.raw
    const span = { request, info, remoteAddress: connection?.remoteAddress, protocol: connection?.protocol }
    return withHandlerSpan(deps.tracer, span, () => handleResource(request, info, env))
  }
  app.all('/api/*', resource)
  app.all('/apis/*', resource)
  app.notFound(() => {
    throw resourceNotFound()
  })
}
