/**
 * Cluster IPs and node ports for Services. Upstream's service REST wraps the
 * generic store so that values are taken after validation and given back
 * when the write fails, the service goes, or its type no longer needs them;
 * here the same happens in the store's begin and finish hooks. Upstream keeps the taken values in
 * storage as bitmaps; here they are rebuilt from the stored services at start.
 */
import { internalError } from '../../machinery/status-error.js'
import { type FieldError, fieldPath, invalid, invalidError } from '../../machinery/field.js'
import { goStrings } from '../../machinery/go-format.js'
import type { KubeObject } from '../../machinery/object.js'
import type { Storage } from '../../storage/interface.js'
import { readAllPaged } from '../../storage/paged-read.js'
import { isHeadless, needsClusterIP, needsNodePorts, serviceSpec, servicePorts, stringList, type ServiceSpec } from './service-defaults.js'
import { type AllocationFailure, canonicalIP, type IPFamily, IPRange, parseCIDR, parseIP, PortRange, type PortSpan } from './service-ranges.js'

/** Upstream's default `--service-cluster-ip-range`. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24'
export const DEFAULT_SERVICE_NODE_PORT_RANGE: PortSpan = { first: 30000, last: 32767 }

export class ServiceRangeError extends Error {}

/** What a service holds: its cluster IPs and node ports. */
interface Holdings {
  ips: string[]
  ports: number[]
}

function holdings(svc: KubeObject | undefined): Holdings {
  if (!svc) return { ips: [], ports: [] }
  const spec = serviceSpec(structuredClone(svc))
  const ips = needsClusterIP(spec) ? stringList(spec['clusterIPs']).filter((ip) => ip !== 'None') : []
  const ports = servicePorts(spec)
    .map((p) => p['nodePort'])
    .filter((p): p is number => typeof p === 'number' && p > 0)
  return { ips, ports: [...new Set(ports)] }
}

const usesNodePorts = (spec: ServiceSpec): boolean =>
  needsNodePorts(spec) && !(spec['type'] === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] === false)

export class ServiceAllocator {
  /** One range per family, the primary first. */
  readonly ipRanges: IPRange[]
  readonly nodePorts: PortRange

  constructor(clusterIPRanges: readonly string[] = [], nodePortRange: PortSpan = DEFAULT_SERVICE_NODE_PORT_RANGE) {
    const texts = clusterIPRanges.length ? clusterIPRanges : [DEFAULT_SERVICE_CLUSTER_IP_RANGE]
    this.ipRanges = texts.map((text) => {
      const cidr = parseCIDR(text)
      if (!cidr) throw new ServiceRangeError(`invalid service cluster IP range ${JSON.stringify(text)}`)
      return new IPRange(cidr)
    })
    if (this.ipRanges.length > 2 || (this.ipRanges.length === 2 && this.ipRanges[0]?.family === this.ipRanges[1]?.family))
      throw new ServiceRangeError('service cluster IP ranges must be at most one IPv4 and one IPv6 range')
    this.nodePorts = new PortRange(nodePortRange)
  }

  /** The `kubernetes` Service's address: the first of the primary range. */
  kubernetesServiceIP(): string {
    return this.primary().first()
  }

  private primary(): IPRange {
    const range = this.ipRanges[0]
    if (!range) throw new ServiceRangeError('no service cluster IP range')
    return range
  }

  private rangeFor(family: string): IPRange | undefined {
    return this.ipRanges.find((r) => r.family === family)
  }

  /** Marks what a stored service holds as taken (start-up), whatever else holds it. */
  record(svc: KubeObject): void {
    const held = holdings(svc)
    for (const ip of held.ips) this.rangeFor(parseIP(ip)?.family ?? '')?.allocate(ip)
    for (const port of held.ports) this.nodePorts.allocate(port)
  }

  /** Gives back what `before` held and `after` (the service's next state, if any) does not. */
  release(before: KubeObject | undefined, after?: KubeObject): void {
    const was = holdings(before)
    const kept = holdings(after)
    for (const ip of was.ips) if (!kept.ips.includes(ip)) this.rangeFor(parseIP(ip)?.family ?? '')?.release(ip)
    for (const port of was.ports) if (!kept.ports.includes(port)) this.nodePorts.release(port)
  }

  /**
   * Fills in and takes the cluster IPs and node ports `svc` needs beyond what
   * `old` (its stored state on update) holds. Returns the undo for a write
   * that does not happen. Throws the 422 (or 500 for a full range) upstream answers.
   */
  allocate(svc: KubeObject, old?: KubeObject): () => void {
    const held = holdings(old)
    const taken: Holdings = { ips: [], ports: [] }
    const undo = () => {
      for (const ip of taken.ips) this.rangeFor(parseIP(ip)?.family ?? '')?.release(ip)
      for (const port of taken.ports) this.nodePorts.release(port)
    }
    const name = svc.metadata.name ?? ''
    try {
      const spec = serviceSpec(svc)
      if (needsClusterIP(spec)) {
        const errs = this.allocateIPs(spec, held, taken)
        if (errs.length) throw invalidError('', 'Service', name, errs)
      }
      if (usesNodePorts(spec)) {
        const errs = this.allocateNodePorts(spec, held, taken)
        if (errs.length) throw invalidError('', 'Service', name, errs)
      }
    } catch (err) {
      undo()
      throw err
    }
    return undo
  }

  /** The families a service asks for, from its ipFamilies, its requested IPs, its policy and the cluster's ranges. */
  private families(spec: ServiceSpec, requested: string[]): IPFamily[] | FieldError {
    const policy = typeof spec['ipFamilyPolicy'] === 'string' ? spec['ipFamilyPolicy'] : 'SingleStack'
    const families = stringList(spec['ipFamilies']) as IPFamily[]
    const out: IPFamily[] = [...families]
    requested.forEach((ip, i) => {
      const family = parseIP(ip)?.family
      if (family && out[i] === undefined && !out.includes(family)) out[i] = family
    })
    if (out.length === 0) out.push(this.primary().family)
    const dual = this.ipRanges.length === 2
    if (policy === 'RequireDualStack' && !dual)
      return invalid(fieldPath('spec').child('ipFamilyPolicy'), policy, 'this cluster is not configured for dual-stack services')
    if (policy !== 'SingleStack' && dual && out.length === 1) out.push(this.ipRanges.find((r) => r.family !== out[0])?.family ?? 'IPv4')
    const missing = out.findIndex((f) => !this.rangeFor(f))
    if (missing >= 0 && (policy !== 'PreferDualStack' || missing === 0))
      return invalid(fieldPath('spec').child('ipFamilies').index(missing), out[missing], 'not configured on this cluster')
    return out.filter((f) => this.rangeFor(f))
  }

  private allocateIPs(spec: ServiceSpec, held: Holdings, taken: Holdings): FieldError[] {
    const ipsPath = fieldPath('spec').child('clusterIPs')
    const requested = stringList(spec['clusterIPs']).map((ip) => canonicalIP(ip) ?? ip)
    const families = this.families(spec, isHeadless(spec) ? [] : requested)
    if (!Array.isArray(families)) return [families]
    if (!spec['ipFamilyPolicy']) spec['ipFamilyPolicy'] = families.length > 1 ? 'PreferDualStack' : 'SingleStack'
    spec['ipFamilies'] = families
    if (isHeadless(spec)) return []
    const ips: string[] = []
    for (const [i, family] of families.entries()) {
      const range = this.rangeFor(family)
      if (!range) continue
      const ip = requested[i]
      if (ip !== undefined) {
        if (parseIP(ip)?.family !== family)
          return [invalid(ipsPath.index(i), ip, `expected an ${family} value as indicated by \`ipFamilies[${i}]\``)]
        if (!held.ips.includes(ip)) {
          const failure = range.allocate(ip)
          if (failure) return [invalid(ipsPath, goStrings(requested), `failed to allocate IP ${ip}: ${ipFailure(failure, ip, range)}`)]
          taken.ips.push(ip)
        }
        ips.push(ip)
      } else {
        const next = range.allocateNext()
        if (next === undefined) throw internalError('failed to allocate a serviceIP: range is full')
        taken.ips.push(next)
        ips.push(next)
      }
    }
    spec['clusterIP'] = ips[0]
    spec['clusterIPs'] = ips
    return []
  }

  private allocateNodePorts(spec: ServiceSpec, held: Holdings, taken: Holdings): FieldError[] {
    const portsPath = fieldPath('spec').child('ports')
    const ports = servicePorts(spec)
    // One port number may serve several protocols of the same service.
    const mine = new Set(held.ports)
    for (const [i, port] of ports.entries()) {
      const wanted = port['nodePort']
      if (typeof wanted !== 'number' || wanted === 0 || mine.has(wanted)) continue
      const failure = this.nodePorts.allocate(wanted)
      if (failure) return [invalid(portsPath.index(i).child('nodePort'), wanted, portFailure(failure, this.nodePorts))]
      taken.ports.push(wanted)
      mine.add(wanted)
    }
    for (const port of ports) {
      if (typeof port['nodePort'] === 'number' && port['nodePort'] > 0) continue
      const next = this.nodePorts.allocateNext()
      if (next === undefined) throw internalError('failed to allocate a nodePort: range is full')
      taken.ports.push(next)
      port['nodePort'] = next
    }
    return []
  }
}

function ipFailure(failure: AllocationFailure, ip: string, range: IPRange): string {
  if (failure === 'allocated') return 'provided IP is already allocated'
  return `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${range.cidr.text}`
}

function portFailure(failure: AllocationFailure, range: PortRange): string {
  if (failure === 'allocated') return 'provided port is already allocated'
  return `provided port is not in the valid range. The range of valid ports is ${range.text()}`
}

/** Told how a write ended: true once stored, false when it failed or was a dry run. */
export type FinishAllocation = (success: boolean) => void

/** What the Services' store runs around its writes (the registry's store hooks, which these fit). */
export interface AllocationHooks {
  beginCreate(obj: KubeObject): FinishAllocation
  beginUpdate(obj: KubeObject, old: KubeObject): FinishAllocation
  afterDelete(obj: KubeObject): void
}

/** Where the stored Services are read from at start: the storage and the key prefix of all namespaces (`prefix('')`). */
export interface StoredServices {
  readonly storage: Pick<Storage, 'list'>
  prefix(namespace: string): string
}

/**
 * The Services' store hooks: values are taken right before the write (after
 * admission and validation), given back when it fails or is a dry run; an
 * update gives back what the old service held and the new one does not, a
 * delete all the service held.
 */
export function allocationHooks(allocator: ServiceAllocator): AllocationHooks {
  return {
    beginCreate(obj) {
      const undo = allocator.allocate(obj)
      return (success) => {
        if (!success) undo()
      }
    },
    beginUpdate(obj, old) {
      const undo = allocator.allocate(obj, old)
      return (success) => {
        if (success) allocator.release(old, obj)
        else undo()
      }
    },
    afterDelete(obj) {
      allocator.release(obj)
    },
  }
}

/** Services read per page when the allocations are rebuilt. */
const REBUILD_PAGE = 500

/** Marks every stored service's IPs and node ports as taken, read from the store itself (core/storage/paged-read.ts): the state after a restart. */
export async function rebuildAllocations(services: StoredServices, allocator: ServiceAllocator): Promise<void> {
  for (const svc of await readAllPaged(services.storage, services.prefix(''), REBUILD_PAGE, { readOnly: true })) allocator.record(svc)
}
