/**
 * A DaemonSet's pods as its controller sees them (upstream's
 * pkg/controller/daemon/util): which nodes should run one, the tolerations
 * every daemon pod gets, the pod made for a node (pinned to it by a required
 * node affinity on `metadata.name`, left for the scheduler to bind), which
 * node a pod is meant for, whether it runs the current template, and the
 * back-off before a failed pod is replaced.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { intOrPercentValue } from '../../resources/apps/int-or-percent.js'
import { matchesNodeAffinity, taintsOf, tolerationsOf, type Toleration, untoleratedTaint } from './node-fit.js'
import type { PodTemplate } from './revision-patch.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})

/** The label naming the ControllerRevision a pod was made from (apps/v1 ControllerRevisionHashLabelKey). */
export const REVISION_HASH_LABEL = 'controller-revision-hash'
/** The label carrying the template generation a pod was made from (upstream's DaemonSetTemplateGenerationKey). */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation'
const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation'


export interface DaemonSetSpec {
  selector?: unknown
  template?: PodTemplate
  minReadySeconds?: number
  revisionHistoryLimit?: number
  updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } }
}

export const dsSpecOf = (ds: KubeObject): DaemonSetSpec => (ds['spec'] as DaemonSetSpec | undefined) ?? {}

/** The template generation the API server keeps in the DaemonSet's annotation, if it reads as a number. */
export function templateGenerationOf(ds: KubeObject): number | undefined {
  const text = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]
  return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : undefined
}

/** Tolerations every daemon pod carries, so node conditions do not evict or keep it off (upstream's AddOrUpdateDaemonPodTolerations). */
function daemonTolerations(hostNetwork: boolean): Toleration[] {
  const tolerations: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ]
  if (hostNetwork) tolerations.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' })
  return tolerations
}

const sameToleration = (a: Toleration, b: Toleration): boolean =>
  (a.key ?? '') === (b.key ?? '') && (a.effect ?? '') === (b.effect ?? '') && (a.operator || 'Equal') === (b.operator || 'Equal') && (a.value ?? '') === (b.value ?? '')

/** Adds the daemon tolerations to a pod spec, replacing one the pod has for the same key, operator, value and effect. */
export function addDaemonTolerations(spec: Obj): void {
  const tolerations = [...tolerationsOf(spec)]
  for (const wanted of daemonTolerations(spec['hostNetwork'] === true)) {
    const at = tolerations.findIndex((t) => sameToleration(t, wanted))
    if (at === -1) tolerations.push(wanted)
    else tolerations[at] = wanted
  }
  spec['tolerations'] = tolerations
}

/**
 * Whether the DaemonSet wants a pod on the node, and whether a pod already
 * there may stay (upstream's NodeShouldRunDaemonPod): the template's
 * nodeName, nodeSelector and required node affinity must hold; a NoSchedule
 * taint not tolerated keeps new pods off but lets a running one stay, a
 * NoExecute one does neither.
 */
export function nodeShouldRunDaemonPod(node: KubeObject, ds: KubeObject): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = structuredClone(dsSpecOf(ds).template?.spec ?? {})
  const wantedNode = spec['nodeName']
  if (typeof wantedNode === 'string' && wantedNode && wantedNode !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false }
  if (!matchesNodeAffinity(spec, node)) return { shouldRun: false, shouldContinueRunning: false }
  addDaemonTolerations(spec)
  const tolerations = tolerationsOf(spec)
  const taints = taintsOf(node)
  if (untoleratedTaint(taints, tolerations, ['NoSchedule', 'NoExecute'])) return { shouldRun: false, shouldContinueRunning: !untoleratedTaint(taints, tolerations, ['NoExecute']) }
  return { shouldRun: true, shouldContinueRunning: true }
}

/** The template pods are made from: the DaemonSet's, with the daemon tolerations, the generation and the revision hash labels. */
export function daemonPodTemplate(ds: KubeObject, hash: string): PodTemplate {
  const template = structuredClone(dsSpecOf(ds).template ?? {})
  const spec = (template.spec ??= {})
  addDaemonTolerations(spec)
  const labels = { ...template.metadata?.labels }
  const generation = templateGenerationOf(ds)
  if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = String(generation)
  if (hash) labels[REVISION_HASH_LABEL] = hash
  template.metadata = { ...template.metadata, labels }
  return template
}

/**
 * The pod spec pinned to one node: its required node affinity becomes a
 * single term on the node's name (upstream's
 * ReplaceDaemonSetPodNodeNameNodeAffinity: the other terms were checked
 * already), and the scheduler binds it there.
 */
export function pinnedToNode(spec: Obj, nodeName: string): Obj {
  const pinned = structuredClone(spec)
  const affinity = { ...obj(pinned['affinity']) }
  const nodeAffinity = { ...obj(affinity['nodeAffinity']) }
  nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'] = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
  }
  affinity['nodeAffinity'] = nodeAffinity
  pinned['affinity'] = affinity
  return pinned
}

/** The node a daemon pod is for: its nodeName once bound, before that the node its affinity pins it to (upstream's GetTargetNodeName). */
export function targetNodeName(pod: KubeObject): string | undefined {
  const spec = obj(pod['spec'])
  if (typeof spec['nodeName'] === 'string' && spec['nodeName']) return spec['nodeName']
  const required = obj(obj(obj(spec['affinity'])['nodeAffinity'])['requiredDuringSchedulingIgnoredDuringExecution'])
  const terms = Array.isArray(required['nodeSelectorTerms']) ? required['nodeSelectorTerms'] : []
  for (const term of terms) {
    for (const field of Array.isArray(obj(term)['matchFields']) ? (obj(term)['matchFields'] as unknown[]) : []) {
      const f = obj(field)
      if (f['key'] !== 'metadata.name' || f['operator'] !== 'In') continue
      const values = Array.isArray(f['values']) ? f['values'] : []
      return values.length === 1 ? String(values[0]) : undefined
    }
  }
  return undefined
}

/** Made from the current template: its revision hash or its template generation matches (upstream's IsPodUpdated). */
export function isPodUpdated(pod: KubeObject, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {}
  return (hash !== '' && labels[REVISION_HASH_LABEL] === hash) || (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation))
}

const isScheduled = (pod: KubeObject): boolean => !!obj(pod['spec'])['nodeName']

/** Bound pods first, then oldest first, then by name (upstream's podByCreationTimestampAndPhase). */
export function byCreationAndBinding(a: KubeObject, b: KubeObject): number {
  if (isScheduled(a) !== isScheduled(b)) return isScheduled(a) ? -1 : 1
  const at = (p: KubeObject): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0
  if (at(a) !== at(b)) return at(a) - at(b)
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0
}

/** An int-or-percent of `total`, percentages rounded up (upstream's GetScaledValueFromIntOrPercent with roundUp). */
function scaledUp(value: unknown, total: number): number {
  if (typeof value === 'string' && value.endsWith('%')) return Math.ceil((intOrPercentValue(value) * total) / 100)
  return intOrPercentValue(value ?? 0)
}

const isRollingUpdate = (ds: KubeObject): boolean => (dsSpecOf(ds).updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate'

/** How many more pods than nodes a rolling update may run (upstream's SurgeCount). */
export function surgeCount(ds: KubeObject, total: number): number {
  if (!isRollingUpdate(ds)) return 0
  return scaledUp(dsSpecOf(ds).updateStrategy?.rollingUpdate?.maxSurge ?? 0, total)
}

/** How many nodes a rolling update may leave without an available pod (upstream's UnavailableCount). */
export function unavailableCount(ds: KubeObject, total: number): number {
  if (!isRollingUpdate(ds)) return 0
  return scaledUp(dsSpecOf(ds).updateStrategy?.rollingUpdate?.maxUnavailable ?? 0, total)
}

export const allowsSurge = (ds: KubeObject): boolean => surgeCount(ds, 1) !== 0

const BACKOFF_BASE_MS = 1_000
const BACKOFF_MAX_MS = 15 * 60_000

/**
 * The pause before a failed daemon pod is deleted again on the same node
 * (upstream's failedPodsBackoff, a flowcontrol.Backoff of 1 s to 15 min):
 * the first failure is acted on at once, each next one within the pause
 * waits it out and doubles it. An entry unused for twice the limit is
 * forgotten.
 */
export class FailedPodBackoff {
  private readonly entries = new Map<string, { delayMs: number; lastUpdate: number }>()

  /** Milliseconds left of the pause for `key`, 0 when none. */
  remainingMs(key: string, now: number): number {
    const entry = this.entries.get(key)
    if (!entry) return 0
    return Math.max(0, entry.lastUpdate + entry.delayMs - now)
  }

  /** Records a failure acted on: the pause starts at 1 s or doubles. */
  next(key: string, now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastUpdate > 2 * BACKOFF_MAX_MS) this.entries.delete(k)
    const entry = this.entries.get(key)
    this.entries.set(key, { delayMs: entry ? Math.min(entry.delayMs * 2, BACKOFF_MAX_MS) : BACKOFF_BASE_MS, lastUpdate: now })
  }

  /** Its current pause (upstream's Get). */
  delayMs(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0
  }
}
