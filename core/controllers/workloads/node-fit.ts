/**
 * Whether a pod may go to a node, as far as labels and taints decide
 * (upstream's component-helpers nodeaffinity and the taint helpers of
 * core/v1): the pod's nodeSelector, its required node affinity terms on the
 * node's labels and on its name (`matchFields` on `metadata.name`), and the
 * node's taints the pod's tolerations cover. Shared by the DaemonSet
 * controller and the simulated scheduler.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export interface Taint {
  key: string
  value?: string
  effect: string
}

export interface Toleration {
  key?: string
  operator?: string
  value?: string
  effect?: string
  tolerationSeconds?: number
}

/** Whether one toleration covers the taint (upstream's ToleratesTaint). */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false
  if (toleration.key && toleration.key !== taint.key) return false
  if (toleration.operator === 'Exists') return true
  return (toleration.value ?? '') === (taint.value ?? '')
}

export const tolerationsOf = (podSpec: unknown): Toleration[] => list(obj(podSpec)['tolerations']) as Toleration[]
export const taintsOf = (node: KubeObject): Taint[] => list(obj(node['spec'])['taints']) as unknown as Taint[]

/** The first of the node's taints with one of `effects` that no toleration covers. */
export function untoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[], effects: readonly string[]): Taint | undefined {
  return taints.find((taint) => effects.includes(taint.effect) && !tolerations.some((t) => toleratesTaint(t, taint)))
}

function matchesRequirement(values: Record<string, string>, requirement: Obj): boolean {
  const key = String(requirement['key'] ?? '')
  const wanted = Array.isArray(requirement['values']) ? requirement['values'].map(String) : []
  const has = Object.hasOwn(values, key)
  const value = values[key]
  switch (requirement['operator']) {
    case 'In':
      return has && wanted.includes(value!)
    case 'NotIn':
      return !has || !wanted.includes(value!)
    case 'Exists':
      return has
    case 'DoesNotExist':
      return !has
    case 'Gt':
    case 'Lt': {
      if (!has || wanted.length !== 1 || !/^-?\d+$/.test(value!) || !/^-?\d+$/.test(wanted[0]!)) return false
      return requirement['operator'] === 'Gt' ? Number(value) > Number(wanted[0]) : Number(value) < Number(wanted[0])
    }
    default:
      return false
  }
}

/**
 * Whether the node satisfies one node selector term: every expression on
 * its labels and every field requirement (only `metadata.name` exists). A
 * term with neither matches nothing, as upstream's.
 */
export function matchesNodeSelectorTerm(node: KubeObject, term: Obj): boolean {
  const expressions = list(term['matchExpressions'])
  const fields = list(term['matchFields'])
  if (!expressions.length && !fields.length) return false
  const labels = node.metadata.labels ?? {}
  const nodeFields: Record<string, string> = { 'metadata.name': node.metadata.name ?? '' }
  return expressions.every((e) => matchesRequirement(labels, e)) && fields.every((f) => matchesRequirement(nodeFields, f))
}

/** The pod's nodeSelector and required node affinity both hold on the node (upstream's GetRequiredNodeAffinity(pod).Match). */
export function matchesNodeAffinity(podSpec: unknown, node: KubeObject): boolean {
  const spec = obj(podSpec)
  const labels = node.metadata.labels ?? {}
  if (!Object.entries(obj(spec['nodeSelector'])).every(([k, v]) => labels[k] === v)) return false
  const required = obj(obj(spec['affinity'])['nodeAffinity'])['requiredDuringSchedulingIgnoredDuringExecution']
  if (!isPlainObject(required)) return true
  return list(required['nodeSelectorTerms']).some((term) => matchesNodeSelectorTerm(node, term))
}
