/**
 * The aggregation layer (upstream's kube-aggregator, in front of the
 * server's own handlers): the APIServices followed in memory, the local
 * ones kept, the aggregated ones probed for availability and proxied to.
 * Discovery and routing ask it which group/versions live elsewhere.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import { followInformer } from '../client/informer.js'
import type { RequestHeaderOptions } from '../authn/authentication-options.js'
import type { Logger } from '../logging/logger.js'
import type { ProxyTransport } from '../proxy/transport.js'
import type { UserInfo } from '../machinery/object.js'
import { APIREGISTRATION_GROUP, type ApiService, readApiService } from './apiservice.js'
import { probeApiService, recordAvailability } from './availability.js'
import { identityHeaderNames } from './identity-headers.js'
import { keepLocalApiServices } from './local-apiservices.js'
import { type AggregatedOpenApi, followOpenApiSpecs } from './openapi-specs.js'
import { aggregatorProxy } from './proxy-handler.js'
import { type RemoteGroup, remoteGroups } from './remote-discovery.js'
import { type AggregatorObjects, serviceLocator } from './service-location.js'

export interface AggregationOptions {
  /** Proxy to an address of the Service's endpoints rather than its cluster IP (`--enable-aggregator-routing`). @default false */
  enableAggregatorRouting?: boolean
  /** Refuse a redirect from an extension server with 502 (`--aggregator-reject-forwarding-redirect`). @default true */
  rejectForwardingRedirect?: boolean
  /** The client certificate presented to extension servers (`--proxy-client-cert-file`, `--proxy-client-key-file`), PEM. */
  proxyClientCertificate?: { certificate: string; key: string }
  /** How often every aggregated APIService is probed; a changed one is probed at once. @default 10000 */
  availabilityIntervalMs?: number
  /** How long after a successful download an APIService's OpenAPI documents are downloaded again (upstream: a minute). @default 60000 */
  openApiIntervalMs?: number
}

export interface Aggregator {
  /** The aggregated APIService of a group/version the server does not serve itself. */
  remote(group: string, version: string): ApiService | undefined
  /** Aggregated groups, highest priority first. */
  groups(): RemoteGroup[]
  /** The APIResourceList last read from the APIService's extension server. */
  discoveryOf(api: ApiService): unknown
  /** `deadline`: the request's (timeout.ts); the backend's connection is given up when it passes. */
  /** `remoteAddress`: the client's, named to the extension server in X-Forwarded-For. */
  proxy(request: Request, api: ApiService, user: UserInfo, deadline?: AbortSignal, remoteAddress?: string): Promise<Response>
  /** The OpenAPI documents last downloaded from the extension servers, for /openapi/v2 and /openapi/v3. */
  openApi: AggregatedOpenApi
  readonly ready: Promise<void>
  stop(): void
}

export interface AggregatorDeps {
  /** The catalogue served and objects as stored: APIServices kept and their status written, services located. */
  objects: AggregatorObjects
  /** The APIServices are followed through the shared informer. */
  informers: InformerFactory
  transport: ProxyTransport
  requestHeader?: RequestHeaderOptions
  now: () => Date
  logger: Logger
}

const DEFAULT_AVAILABILITY_INTERVAL_MS = 10_000
const DEFAULT_OPENAPI_INTERVAL_MS = 60_000

/** Undefined when APIServices are not served (`--runtime-config` turned apiregistration.k8s.io off). */
export function startAggregator(options: AggregationOptions, deps: AggregatorDeps): Aggregator | undefined {
  const { objects, now, logger } = deps
  const entry = objects.catalogue.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices')
  if (!entry) return undefined
  const local = keepLocalApiServices(objects, now, logger)
  const locate = serviceLocator(objects, options.enableAggregatorRouting ?? false)
  const names = identityHeaderNames(deps.requestHeader)
  const probeDeps = {
    objects,
    transport: deps.transport,
    locate,
    ...(options.proxyClientCertificate ? { clientCertificate: options.proxyClientCertificate } : {}),
    names,
    now,
    logger,
  }

  const byName = new Map<string, ApiService>()
  const byGroupVersion = new Map<string, ApiService>()
  const discovery = new Map<string, { spec: string; list: unknown }>()
  const gvKey = (group: string, version: string) => `${group}/${version}`
  const specKey = (api: ApiService) => JSON.stringify(api.object['spec'] ?? {})
  const servedLocally = (group: string, version: string) => objects.catalogue.hasGroupVersion(group, version)

  const probing = new Set<string>()
  const probe = async (name: string): Promise<void> => {
    const api = byName.get(name)
    if (!api?.service || servedLocally(api.group, api.version) || probing.has(name)) return
    probing.add(name)
    try {
      const result = await probeApiService(api, probeDeps)
      if (result.discovery !== undefined) discovery.set(name, { spec: specKey(api), list: result.discovery })
      const current = byName.get(name)
      if (current && specKey(current) === specKey(api)) await recordAvailability(objects, current, result.condition, now)
    } catch (err) {
      logger.warn({ apiService: name, err: String(err) }, 'cannot record the availability of an APIService')
    } finally {
      probing.delete(name)
    }
  }

  const proxy = aggregatorProxy({
    transport: deps.transport,
    locate,
    ...(options.proxyClientCertificate ? { clientCertificate: options.proxyClientCertificate } : {}),
    ...(deps.requestHeader ? { requestHeader: deps.requestHeader } : {}),
    rejectForwardingRedirect: options.rejectForwardingRedirect ?? true,
  })

  const openApi = followOpenApiSpecs({ proxy, logger, intervalMs: options.openApiIntervalMs ?? DEFAULT_OPENAPI_INTERVAL_MS })

  const feed = followInformer(deps.informers.informer(entry), (event, obj) => {
    const name = obj.metadata.name ?? ''
    const previous = byName.get(name)
    if (previous) byGroupVersion.delete(gvKey(previous.group, previous.version))
    if (event === 'delete') {
      byName.delete(name)
      discovery.delete(name)
      openApi.forget(name)
      if (previous && servedLocally(previous.group, previous.version)) void local?.reconcile().catch(() => {})
      return
    }
    const api = readApiService(obj)
    byName.set(name, api)
    byGroupVersion.set(gvKey(api.group, api.version), api)
    if (!api.service || servedLocally(api.group, api.version)) openApi.forget(name)
    else openApi.track(api)
    if (!api.service) return
    // A built-in or CRD group/version stays the server's own: the local APIService is put back.
    if (servedLocally(api.group, api.version)) void local?.reconcile().catch(() => {})
    else if (!previous || specKey(previous) !== specKey(api)) void probe(name)
  })
  const timer = setInterval(() => {
    for (const name of byName.keys()) void probe(name)
  }, options.availabilityIntervalMs ?? DEFAULT_AVAILABILITY_INTERVAL_MS)
  // Background polling: an embedder's process may end without stopping the server, as with its other timers.
  ;(timer as { unref?: () => void }).unref?.()

  return {
    remote(group, version) {
      if (servedLocally(group, version)) return undefined
      const api = byGroupVersion.get(gvKey(group, version))
      return api?.service ? api : undefined
    },
    groups: () => remoteGroups(byName.values(), (group) => objects.catalogue.entries.some((e) => e.group === group)),
    discoveryOf(api) {
      const kept = discovery.get(api.name)
      return kept && kept.spec === specKey(api) ? kept.list : undefined
    },
    proxy,
    openApi,
    ready: Promise.all([feed.ready, local?.ready]).then(() => undefined),
    stop() {
      clearInterval(timer)
      openApi.stop()
      feed.stop()
      local?.stop()
    },
  }
}
