/**
 * The `kubernetes` Service in `default` and its Endpoints and EndpointSlice,
 * as upstream's bootstrap controller keeps them: the first address of the
 * service range, port 443 (`https`) to the server's secure port, and the
 * server's advertised address behind it. Kept in place: put back when deleted.
 */
import { semanticEqual } from '../resources/rbac/semantic-equal.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import type { ResourceObjects, StoredResources } from './stored-resources.js'
import { endpointSlices } from '../resources/groups/discovery.js'
import type { KubeObject } from '../machinery/object.js'
import { endpoints, services } from '../resources/core/services.js'
import { parseIP } from '../resources/core/service-ranges.js'
import type { EndpointLeases } from './endpoint-leases.js'
import { nonSpecialIPErrors } from '../resources/core/endpoints-validation.js'
import { FieldPath } from '../machinery/field.js'

export const KUBERNETES_SERVICE = 'kubernetes'

export interface KubernetesServiceSettings {
  clusterIP: string
  /** The address behind the service (`--advertise-address`). */
  advertiseAddress: string
  /** 0: ClusterIP; otherwise a NodePort service on this port (`--platform-service-node-port`). */
  nodePort: number
  /** false with `--endpoint-reconciler-type=none`: the endpoints are left alone. */
  manageEndpoints: boolean
  /**
   * With several servers on one store (`--endpoint-reconciler-type=lease`):
   * the endpoints list every live server's address, renewed each `intervalMs`.
   * Absent: this server's address alone.
   */
  leases?: { leases: EndpointLeases; intervalMs: number }
}

function context(now: Date): DirectWriteContext {
  return { user: LOOPBACK_IDENTITY, now, dryRun: false }
}

function serviceBody(s: KubernetesServiceSettings, port: number): KubeObject {
  const servicePort: Record<string, unknown> = { name: 'https', protocol: 'TCP', port: 443, targetPort: port }
  if (s.nodePort) servicePort['nodePort'] = s.nodePort
  return {
    metadata: { name: KUBERNETES_SERVICE, namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: {
      type: s.nodePort ? 'NodePort' : 'ClusterIP',
      clusterIP: s.clusterIP,
      ports: [servicePort],
      sessionAffinity: 'None',
    },
  }
}

function endpointsBody(addresses: readonly string[], port: number): KubeObject {
  return {
    metadata: {
      name: KUBERNETES_SERVICE,
      namespace: 'default',
      // The slice below is written directly; the mirroring controller must not make a second one.
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
    },
    subsets: [{ addresses: addresses.map((ip) => ({ ip })), ports: [{ name: 'https', port, protocol: 'TCP' }] }],
  }
}

function sliceBody(addresses: readonly string[], port: number): KubeObject {
  return {
    metadata: { name: KUBERNETES_SERVICE, namespace: 'default', labels: { 'kubernetes.io/service-name': KUBERNETES_SERVICE } },
    addressType: parseIP(addresses[0] ?? '')?.family ?? 'IPv4',
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  }
}

// Stored objects come back in Go's field order, not the order written here: a text comparison would write on every start.
const same = semanticEqual

/** Top-level fields of `body` copied into `obj` (an endpoints' subsets, a slice's endpoints). */
const fieldsOf = (body: KubeObject, fields: string[]) => (obj: KubeObject): KubeObject =>
  fields.every((f) => same(obj[f], body[f])) ? obj : { ...obj, ...Object.fromEntries(fields.map((f) => [f, body[f]])) }

/** The service's type and ports follow the settings; its cluster IP, once taken, stays. */
const serviceOf = (body: KubeObject) => (obj: KubeObject): KubeObject => {
  const spec = (obj['spec'] ?? {}) as Record<string, unknown>
  const want = body['spec'] as Record<string, unknown>
  const ports = (spec['ports'] ?? []) as Record<string, unknown>[]
  const wantPorts = want['ports'] as Record<string, unknown>[]
  const matches =
    spec['type'] === want['type'] &&
    ports.length === wantPorts.length &&
    wantPorts.every((p, i) => Object.entries(p).every(([k, v]) => ports[i]?.[k] === v))
  return matches ? obj : { ...obj, spec: { ...spec, type: want['type'], ports: wantPorts } }
}

/** Creates the object, or brings the stored one in line through `align` (which returns it unchanged when it is). */
async function ensure(store: ResourceObjects, body: KubeObject, align: (obj: KubeObject) => KubeObject, now: Date): Promise<void> {
  // Read first: a create of the existing service would be refused for its taken IP before its name.
  const current = await store.get('default', KUBERNETES_SERVICE).catch((err: unknown) => {
    if (hasStatusCode(err, 404)) return undefined
    throw err
  })
  if (!current) {
    await store.create('default', structuredClone(body), context(now)).catch((err: unknown) => {
      if (!hasStatusCode(err, 409)) throw err
    })
    return
  }
  if (align(current) === current) return
  await store.update('default', KUBERNETES_SERVICE, align, context(now))
}

export interface KubernetesServiceController {
  /** The port the server listens on became known (or changed): the service and endpoints follow it. */
  setSecurePort(port: number): Promise<void>
  stop(): void
  /** Drops this server's address from the lease records (graceful shutdown); the others' next pass updates the endpoints. */
  removeAddress(): Promise<void>
}

/**
 * Starts keeping the objects once the secure port is known (`setSecurePort`);
 * watches them to put back what is deleted.
 */
export function startKubernetesService(
  stores: StoredResources,
  settings: KubernetesServiceSettings,
  now: () => Date,
  logger: Logger,
): KubernetesServiceController {
  const controller = new AbortController()
  let port: number | undefined
  const serviceStore = stores.store(services)
  const endpointStores = settings.manageEndpoints ? [stores.store(endpoints), stores.store(endpointSlices)] : []

  const reconcile = async (): Promise<void> => {
    if (port === undefined || controller.signal.aborted) return
    const p = port
    const svc = serviceBody(settings, p)
    await ensure(serviceStore, svc, serviceOf(svc), now())
    const [ep, slice] = endpointStores
    if (!ep) return
    const addresses = settings.leases ? await settings.leases.leases.renew() : [settings.advertiseAddress]
    const body = endpointsBody(addresses, p)
    await ensure(ep, body, fieldsOf(body, ['subsets']), now())
    // A slice may not name a loopback address (upstream's validation), where Endpoints may here: a server
    // advertising 127.0.0.1 (a local one's default) keeps Endpoints alone, as upstream's keeps neither.
    const sliceAddresses = addresses.filter((a) => nonSpecialIPErrors(a, FieldPath.root('address'), true).length === 0)
    if (slice && sliceAddresses.length > 0) {
      const sliceWanted = sliceBody(sliceAddresses, p)
      await ensure(slice, sliceWanted, fieldsOf(sliceWanted, ['addressType', 'endpoints', 'ports']), now())
    }
  }
  const reconcileLogged = () =>
    reconcile().catch((err) => logger.warn({ err: String(err) }, 'keeping the kubernetes service failed; retried when the port is set again or the objects are deleted'))

  const watchDeletions = async (store: ResourceObjects) => {
    const watcher = store.storage.watch(store.key('default', KUBERNETES_SERVICE), { signal: controller.signal })
    for await (const event of watcher) if (event.type === 'DELETED') await reconcileLogged()
  }
  // Each server renews its address and brings the list up to date; an unchanged list writes nothing.
  const timer = settings.leases && endpointStores.length ? setInterval(() => void reconcileLogged(), settings.leases.intervalMs) : undefined
  for (const store of [serviceStore, ...endpointStores])
    watchDeletions(store).catch((err) => {
      if (!controller.signal.aborted) logger.error({ err: String(err) }, 'kubernetes service controller stopped')
    })

  return {
    async setSecurePort(next) {
      port = next
      await reconcileLogged()
    },
    stop: () => {
      clearInterval(timer)
      controller.abort()
    },
    async removeAddress() {
      await settings.leases?.leases.remove()
    },
  }
}
