/**
 * What upstream's node defaults and strategies settle before validation. v1's
 * conversion holds `podCIDR` and `podCIDRs` together (the single field wins
 * when they disagree, as older clients write it). The dynamic kubelet
 * configuration, removed as a feature, is dropped: `spec.configSource` and
 * `status.config` on create, and on later writes unless the stored node
 * already has them. A status with capacity and no allocatable gets the
 * capacity as allocatable.
 */
import { text } from '../columns/values.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'


export function syncPodCIDRs(node: KubeObject): void {
  const spec = node['spec']
  if (!isPlainObject(spec)) return
  const single = text(spec['podCIDR'])
  const listed = Array.isArray(spec['podCIDRs']) ? spec['podCIDRs'] : []
  if (single && (listed.length === 0 || single !== listed[0])) spec['podCIDRs'] = [single]
  const cidrs = Array.isArray(spec['podCIDRs']) ? spec['podCIDRs'] : []
  if (cidrs.length > 0 && text(cidrs[0])) spec['podCIDR'] = cidrs[0]
  else delete spec['podCIDR']
}

function drop(obj: KubeObject, part: 'spec' | 'status', field: string): void {
  const holder = obj[part]
  if (isPlainObject(holder)) delete holder[field]
}

const has = (obj: KubeObject, part: 'spec' | 'status', field: string): boolean => {
  const holder = obj[part]
  return isPlainObject(holder) && holder[field] !== undefined && holder[field] !== null
}

/** Upstream's SetDefaults_NodeStatus: a node that reports its capacity alone may allocate all of it. */
export function defaultNodeAllocatable(node: KubeObject): void {
  const status = node['status']
  if (!isPlainObject(status) || !isPlainObject(status['capacity'])) return
  if (status['allocatable'] === undefined || status['allocatable'] === null) status['allocatable'] = structuredClone(status['capacity'])
}

export function prepareNodeForCreate(node: KubeObject): void {
  drop(node, 'spec', 'configSource')
  drop(node, 'status', 'config')
}

export function prepareNodeForUpdate(node: KubeObject, old: KubeObject): void {
  if (!has(old, 'spec', 'configSource')) drop(node, 'spec', 'configSource')
}

export function prepareNodeStatusUpdate(node: KubeObject, old: KubeObject): void {
  if (!has(old, 'status', 'config')) drop(node, 'status', 'config')
}
