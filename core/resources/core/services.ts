/**
 * Services and their Endpoints. Upstream keeps both under
 * `/registry/services/` (`specs/` and `endpoints/`). Defaults and rules are
 * in service-defaults.ts and service-validation.ts; cluster IPs and node
 * ports are taken around the storage writes (service-allocation.ts).
 */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { formatLabels } from '../columns/format.js'
import { clusterIP, externalIP, servicePorts, serviceType } from '../columns/service.js'
import { at, int, list, text } from '../columns/values.js'
import { connectSubresource, defineResource, PROXY_VERBS, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { dns1035LabelName } from '../names.js'
import { applyServiceDefaultsInSteps, prepareServiceForCreate, prepareServiceForUpdate } from './service-defaults.js'
import { validateServiceInSteps, validateServiceUpdateInSteps } from './service-validation.js'
import { validateEndpointsInSteps } from './endpoints-validation.js'
import { validateServiceStatusUpdate } from './service-status-validation.js'

export const services: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Service',
  resource: 'services',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: [
    connectSubresource('proxy', 'ServiceProxyOptions', PROXY_VERBS),
    // serviceStatusStrategy: the load-balancer status alone is checked, not the spec.
    { ...statusSubresource('Service'), validateUpdate: validateServiceStatusUpdate },
  ],
  validateName: dns1035LabelName,
  storagePath: 'services/specs',
  strategy: {
    // A PUT of a service not stored creates it, as upstream's svcStrategy allows.
    allowCreateOnUpdate: true,
    applyDefaults: applyServiceDefaultsInSteps,
    prepareForCreate: prepareServiceForCreate,
    prepareForUpdate: prepareServiceForUpdate,
    validate: validateServiceInSteps,
    validateUpdate: validateServiceUpdateInSteps,
    fieldSet: (svc) => ({ 'spec.clusterIP': text(at(svc, 'spec', 'clusterIP')), 'spec.type': serviceType(svc) }),
  },
  columns: [
    nameColumn,
    column('Type', 'How the service is exposed.', serviceType),
    column('Cluster-IP', 'The virtual IP inside the cluster.', clusterIP),
    column('External-IP', 'Addresses outside the cluster.', externalIP),
    column('Port(s)', 'The ports the service serves.', servicePorts),
    ageColumn,
    wideColumn('Selector', 'The pods the service routes to.', (svc) => formatLabels(at(svc, 'spec', 'selector'))),
  ],
})

/** `ip:port` for every address and port, at most three, as upstream's formatEndpoints. */
function formatEndpoints(ep: KubeObject): string {
  const subsets = list(ep['subsets'])
  if (subsets.length === 0) return '<none>'
  const shown: string[] = []
  let count = 0
  for (const subset of subsets) {
    const addresses = list(at(subset, 'addresses')).map((a) => text(at(a, 'ip')))
    const ports = list(at(subset, 'ports'))
    const pairs =
      ports.length === 0
        ? addresses
        : ports.flatMap((p) => addresses.map((ip) => (ip.includes(':') ? `[${ip}]` : ip) + `:${int(at(p, 'port'))}`))
    count += pairs.length
    for (const pair of pairs) if (shown.length < 3) shown.push(pair)
  }
  const joined = shown.join(',')
  return count > 3 ? `${joined} + ${count - 3} more...` : joined
}

/** Upstream's SetDefaults_EndpointPort: a port without a protocol is TCP. */
function defaultEndpointPorts(obj: KubeObject): void {
  for (const subset of Array.isArray(obj['subsets']) ? obj['subsets'] : []) {
    const ports = (subset as { ports?: unknown }).ports
    for (const port of Array.isArray(ports) ? ports : []) {
      if (port && typeof port === 'object' && !(port as { protocol?: unknown }).protocol) (port as { protocol: string }).protocol = 'TCP'
    }
  }
}

export const endpoints: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  resource: 'endpoints',
  namespaced: true,
  shortNames: ['ep'],
  storagePath: 'services/endpoints',
  deprecated: { major: 1, minor: 33, replacement: 'discovery.k8s.io/v1 EndpointSlice' },
  // A PUT of endpoints not stored creates them, as upstream's strategy allows.
  strategy: { allowCreateOnUpdate: true, applyDefaults: defaultEndpointPorts, validate: validateEndpointsInSteps, validateUpdate: validateEndpointsInSteps },
  columns: [nameColumn, column('Endpoints', 'The addresses and ports behind the service.', formatEndpoints), ageColumn],
})
