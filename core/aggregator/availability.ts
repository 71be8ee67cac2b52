/**
 * The Available condition of aggregated APIServices, as upstream's
 * availability controller decides it: the Service exists, a ClusterIP
 * Service has the port and an endpoint address for it, and the extension
 * server answers its discovery document (`/apis/<group>/<version>`) within
 * 5 s, asked as `system:kube-aggregator` in `system:masters` over a
 * connection that presents the proxy client certificate and, as upstream,
 * does not verify the serving one (the answer only reports health; requests
 * are verified). The discovery document it read is kept for `/apis`.
 */
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { ProxyTransport } from '../proxy/transport.js'
import { parseJsonInSlices } from '../machinery/json-in-slices.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { APIREGISTRATION_GROUP, type ApiService, type AvailableCondition, withAvailableCondition } from './apiservice.js'
import { identityHeaderLines, type IdentityHeaderNames } from './identity-headers.js'
import { readBounded } from './read-bounded.js'
import { type AggregatorObjects, readService, type ServiceLocation } from './service-location.js'

const PROBE_TIMEOUT_MS = 5000
/** A discovery document larger than this is not kept. */
const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024

export interface AvailabilityDeps {
  objects: AggregatorObjects
  transport: ProxyTransport
  locate: (ref: NonNullable<ApiService['service']>) => Promise<ServiceLocation>
  clientCertificate?: { certificate: string; key: string }
  names: IdentityHeaderNames
  now: () => Date
  logger: Logger
}

export interface ProbeResult {
  condition: AvailableCondition
  /** The APIResourceList the extension server answered, when it answered one. */
  discovery?: unknown
}

type EndpointSubset = { addresses?: unknown[]; ports?: { name?: string }[] }

async function readEndpoints(objects: AggregatorObjects, namespace: string, name: string): Promise<KubeObject | undefined> {
  const entry = objects.catalogue.lookup('', 'v1', 'endpoints')
  if (!entry) return undefined
  return objects.stored.get(entry, namespace, name).catch(() => undefined)
}

/** One check of one aggregated APIService; never throws. */
export async function probeApiService(api: ApiService, deps: AvailabilityDeps): Promise<ProbeResult> {
  const ref = api.service!
  const where = `service/${ref.name} in ${JSON.stringify(ref.namespace)}`
  const service = await readService(deps.objects, ref)
  if (!service) return { condition: { status: 'False', reason: 'ServiceNotFound', message: `${where} is not present` } }
  const spec = isPlainObject(service['spec']) ? service['spec'] : {}
  if ((spec['type'] ?? 'ClusterIP') === 'ClusterIP') {
    const ports = (Array.isArray(spec['ports']) ? spec['ports'] : []).filter(isPlainObject)
    const port = ports.find((p) => p['port'] === ref.port)
    if (!port) return { condition: { status: 'False', reason: 'ServicePortError', message: `${where} is not listening on port ${ref.port}` } }
    const portName = typeof port['name'] === 'string' ? port['name'] : ''
    const endpoints = await readEndpoints(deps.objects, ref.namespace, ref.name)
    if (!endpoints) return { condition: { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for ${where}` } }
    const subsets = (Array.isArray(endpoints['subsets']) ? endpoints['subsets'] : []) as EndpointSubset[]
    const ready = subsets.some((s) => (s.addresses?.length ?? 0) > 0 && (s.ports ?? []).some((p) => (p.name ?? '') === portName))
    if (!ready) {
      return {
        condition: { status: 'False', reason: 'MissingEndpoints', message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}` },
      }
    }
  }
  const path = api.group === '' ? `/api/${api.version}` : `/apis/${api.group}/${api.version}`
  let url = path
  const probeDeadline = AbortSignal.timeout(PROBE_TIMEOUT_MS)
  try {
    const location = await deps.locate(ref)
    url = location.origin + path
    const response = await deps.transport.roundTrip(
      {
        origin: location.origin,
        insecureSkipTLSVerify: true,
        ...(deps.clientCertificate ? { clientCertificate: deps.clientCertificate } : {}),
        dialTimeoutMs: PROBE_TIMEOUT_MS,
        egress: 'cluster',
      },
      {
        method: 'GET',
        path,
        headers: new Headers({ accept: 'application/json' }),
        headerLines: identityHeaderLines({ username: 'system:kube-aggregator', groups: ['system:masters'] }, deps.names),
        body: null,
        signal: probeDeadline,
      },
    )
    if (response.status < 200 || response.status >= 300) {
      await response.body?.cancel().catch(() => {})
      if (response.status >= 300 && response.status < 400) return { condition: passed }
      throw new Error(`bad status from ${url}: ${response.status}`)
    }
    // Upstream's check closes the body unread: a status in the 200s passes whatever follows. The discovery
    // document kept here is read from it when it comes whole; a body that drips or breaks off passes without one.
    let discovery: unknown
    try {
      const text = await readBounded(response, MAX_DISCOVERY_BYTES)
      discovery = text === undefined ? undefined : await parseJsonInSlices(text)
    } catch {
      discovery = undefined
    }
    return { condition: passed, ...(discovery !== undefined ? { discovery } : {}) }
  } catch (err) {
    // Go's client words its own timeout so, the request named by method and URL.
    const timedOut = probeDeadline.aborted ? `Get ${JSON.stringify(url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)` : undefined
    const reason = timedOut ?? (err instanceof Error ? (err.name === 'TimeoutError' ? `timed out waiting for ${url}` : err.message) : String(err))
    const message = reason.startsWith('bad status') || reason.startsWith('timed out') ? reason : `failing or missing response from ${url}: ${reason}`
    return { condition: { status: 'False', reason: 'FailedDiscoveryCheck', message } }
  }
}

const passed: AvailableCondition = { status: 'True', reason: 'Passed', message: 'all checks passed' }

/** Writes the condition when it changed; the write goes through the status subresource, as upstream's UpdateStatus. */
export async function recordAvailability(objects: AggregatorObjects, api: ApiService, condition: AvailableCondition, now: () => Date): Promise<void> {
  if (!withAvailableCondition(api.object, condition, now())) return
  const entry = objects.catalogue.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices')
  if (!entry) return
  await objects.stored.update(entry, '', api.name, (obj) => withAvailableCondition(obj, condition, now()) ?? obj, { user: ADMIN_IDENTITY, now: now() }, 'status')
}
