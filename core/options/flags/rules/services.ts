/**
 * Rules for the cluster's Services and peers (upstream: kube-apiserver's
 * validateClusterIPFlags, validateServiceNodePort, the public address
 * family check, and the peer proxy flags' feature gate).
 */
import { featureEnabled } from '../features.js'
import { parseIP } from '../../../machinery/ip.js'
import { ENDPOINT_RECONCILER_TYPES } from '../table/misc.js'
import { invalidValue, oneOf, type Rule } from './rule.js'

/** Service IP ranges are kept whole in storage, so they may not be huge (at most 2^20 addresses). */
const MAX_SERVICE_CIDR_HOST_BITS = 20

const endpointReconciler: Rule = ({ values }) => oneOf('endpoint-reconciler-type', values['endpoint-reconciler-type'], ENDPOINT_RECONCILER_TYPES)

const serviceClusterIPRange: Rule = ({ values }) => {
  const ranges = values['service-cluster-ip-range']
  const problems: string[] = []
  if (ranges.length > 2) problems.push('--service-cluster-ip-range must not contain more than two entries')
  const [primary, secondary] = ranges
  if (primary && secondary && primary.family === secondary.family) {
    problems.push('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family')
  }
  ranges.slice(0, 2).forEach((cidr, i) => {
    const flag = i === 0 ? '--service-cluster-ip-range' : '--service-cluster-ip-range[1]'
    if (cidr.bits - cidr.prefix > MAX_SERVICE_CIDR_HOST_BITS) {
      problems.push(`specified ${flag} is too large; for ${cidr.bits}-bit addresses, the mask must be >= ${cidr.bits - MAX_SERVICE_CIDR_HOST_BITS}`)
    }
  })
  if (primary && primary.bits - primary.prefix < 3) problems.push('the service cluster IP range must be at least 8 IP addresses')
  return problems
}

/** The cluster Service has one address, in the primary range: it must be of the advertised address's family. */
const serviceFamilyMatchesAdvertiseAddress: Rule = ({ values }) => {
  const primary = values['service-cluster-ip-range'][0]
  const advertised = parseIP(values['advertise-address'])
  if (!primary || !advertised || values['endpoint-reconciler-type'] === 'none' || primary.family === advertised.family) return []
  return [`service IP family ${JSON.stringify(`${primary.network}/${primary.prefix}`)} must match public address family ${JSON.stringify(values['advertise-address'])}`]
}

const serviceNodePort: Rule = ({ values }) => {
  const port = values['platform-service-node-port']
  if (port < 0 || port > 65535) {
    return [`--platform-service-node-port ${port} must be between 0 and 65535, inclusive. If 0, the cluster Service will be of type ClusterIP`]
  }
  const range = values['service-node-port-range']
  if (port > 0 && range && (port < range.first || port > range.last)) {
    return [`platform service node port range ${range.first}-${range.last} doesn't contain ${port}`]
  }
  return []
}

const peers: Rule = ({ values }) => {
  const problems: string[] = []
  const ip = values['peer-advertise-ip']
  if (ip !== '' && !parseIP(ip)) problems.push(invalidValue('peer-advertise-ip', ip, 'must be a valid IP address'))
  const port = values['peer-advertise-port']
  if (port !== '' && !(/^\d+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    problems.push(invalidValue('peer-advertise-port', port, 'must be a port number between 1 and 65535'))
  }
  if (!featureEnabled(values, 'UnknownVersionInteroperabilityProxy')) {
    for (const flag of ['peer-ca-file', 'peer-advertise-ip', 'peer-advertise-port'] as const) {
      if (values[flag] !== '') problems.push(`--${flag} requires UnknownVersionInteroperabilityProxy feature to be turned on`)
    }
  }
  return problems
}

export const SERVICE_RULES: readonly Rule[] = [endpointReconciler, serviceClusterIPRange, serviceFamilyMatchesAdvertiseAddress, serviceNodePort, peers]
