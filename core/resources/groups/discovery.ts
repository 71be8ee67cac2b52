/** discovery.k8s.io/v1: endpoint slices, the scalable successor of Endpoints. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { listWithMore } from '../columns/format.js'
import { at, list, text, textAt } from '../columns/values.js'
import { defineResource } from '../define.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { validateEndpointSliceInSteps, validateEndpointSliceUpdateInSteps } from '../discovery/endpoint-slice-validation.js'

/** upstream's SetDefaults_EndpointPort: a port without a name or protocol is unnamed and TCP. */
function defaultEndpointSlicePorts(slice: KubeObject): void {
  for (const port of list(slice['ports'])) {
    if (!isPlainObject(port)) continue
    port['name'] ??= ''
    port['protocol'] ??= 'TCP'
  }
}

export const endpointSlices: ResourceEntry = defineResource({
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  resource: 'endpointslices',
  namespaced: true,
  strategy: {
    applyDefaults: defaultEndpointSlicePorts,
    validate: validateEndpointSliceInSteps, validateUpdate: validateEndpointSliceUpdateInSteps,
  },
  columns: [
    nameColumn,
    column('AddressType', 'IPv4, IPv6 or FQDN.', textAt('addressType')),
    column('Ports', 'The ports of the endpoints.', (es) =>
      listWithMore(
        list(es['ports']).map((p) => {
          const port = at(p, 'port')
          return typeof port === 'number' ? String(port) : text(at(p, 'name')) || '*'
        }),
      ),
    ),
    column('Endpoints', 'The addresses of the endpoints.', (es) =>
      listWithMore(list(es['endpoints']).flatMap((e) => list(at(e, 'addresses')).map(text))),
    ),
    ageColumn,
  ],
})
