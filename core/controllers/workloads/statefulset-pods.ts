/**
 * What a StatefulSet's pods and claims look like (upstream's
 * stateful_set_utils): `<set>-<ordinal>` pods with a stable hostname under
 * the set's Service, `<claim>-<set>-<ordinal>` claims mounted in place of
 * the template's volumes of the same name, the labels naming the pod, its
 * index and its revision, and the pod states the controller waits on.
 */
import type { KubeObject, OwnerReference } from '../../machinery/object.js'
import { isPodAvailable, isPodReady } from './pod-state.js'
import { controllerRefTo } from './owned.js'
import type { PodTemplate } from './revision-patch.js'

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name'
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index'
export const REVISION_LABEL = 'controller-revision-hash'

interface ClaimTemplate {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [field: string]: unknown }
  spec?: unknown
}

export interface StatefulSetSpec {
  replicas?: number
  serviceName?: string
  podManagementPolicy?: string
  minReadySeconds?: number
  revisionHistoryLimit?: number
  ordinals?: { start?: number }
  selector?: { matchLabels?: Record<string, string> }
  template?: PodTemplate
  volumeClaimTemplates?: ClaimTemplate[]
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } }
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string }
}

export const setSpecOf = (set: KubeObject): StatefulSetSpec => (set['spec'] as StatefulSetSpec | undefined) ?? {}
export const startOrdinal = (set: KubeObject): number => setSpecOf(set).ordinals?.start ?? 0
export const replicasOf = (set: KubeObject): number => setSpecOf(set).replicas ?? 1

/** The parent name and ordinal a pod's name carries, ordinal -1 when it carries none. */
export function parentAndOrdinal(pod: KubeObject): { parent: string; ordinal: number } {
  const match = /^(.*)-([0-9]+)$/.exec(pod.metadata.name ?? '')
  if (!match) return { parent: '', ordinal: -1 }
  const ordinal = Number(match[2])
  return { parent: match[1]!, ordinal: ordinal <= 2147483647 ? ordinal : -1 }
}

export const ordinalOf = (pod: KubeObject): number => parentAndOrdinal(pod).ordinal
export const isMemberOf = (set: KubeObject, pod: KubeObject): boolean => parentAndOrdinal(pod).parent === set.metadata.name
export const podName = (set: KubeObject, ordinal: number): string => `${set.metadata.name}-${ordinal}`
export const claimName = (set: KubeObject, template: ClaimTemplate, ordinal: number): string => `${template.metadata?.name ?? ''}-${set.metadata.name}-${ordinal}`

export function inOrdinalRange(set: KubeObject, pod: KubeObject): boolean {
  const ordinal = ordinalOf(pod)
  return ordinal >= startOrdinal(set) && ordinal < startOrdinal(set) + replicasOf(set)
}

const statusOf = (pod: KubeObject): { phase?: string } => (pod['status'] as { phase?: string } | undefined) ?? {}
/** The API server has it (a pod built here and not yet created has no phase). */
export const isCreated = (pod: KubeObject): boolean => !!statusOf(pod).phase
export const isPending = (pod: KubeObject): boolean => statusOf(pod).phase === 'Pending'
export const isFailed = (pod: KubeObject): boolean => statusOf(pod).phase === 'Failed'
export const isSucceeded = (pod: KubeObject): boolean => statusOf(pod).phase === 'Succeeded'
export const isTerminating = (pod: KubeObject): boolean => !!pod.metadata.deletionTimestamp
export const isRunningAndReady = (pod: KubeObject): boolean => statusOf(pod).phase === 'Running' && isPodReady(pod)
export const isRunningAndAvailable = (pod: KubeObject, minReadySeconds: number, now: Date): boolean => isPodAvailable(pod, minReadySeconds, now)
export const isHealthy = (pod: KubeObject): boolean => isRunningAndReady(pod) && !isTerminating(pod)
export const revisionOfPod = (pod: KubeObject): string => pod.metadata.labels?.[REVISION_LABEL] ?? ''

/** The claims a pod of the set mounts, by template name, in template order. */
export function claimsFor(set: KubeObject, ordinal: number): Array<{ volume: string; claim: KubeObject }> {
  const spec = setSpecOf(set)
  const selectorLabels = spec.selector?.matchLabels ?? {}
  return (spec.volumeClaimTemplates ?? []).map((template) => {
    const copy = structuredClone(template) as Record<string, unknown> & ClaimTemplate
    const labels = { ...(template.metadata?.labels ?? {}), ...selectorLabels }
    const metadata: KubeObject['metadata'] = { ...(copy.metadata ?? {}), name: claimName(set, template, ordinal), namespace: set.metadata.namespace ?? '' }
    if (Object.keys(labels).length) metadata.labels = labels
    else delete metadata.labels
    delete copy['status']
    return { volume: template.metadata?.name ?? '', claim: { ...copy, apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata } as KubeObject }
  })
}

type Volume = { name?: string; persistentVolumeClaim?: { claimName?: string; readOnly?: boolean } }
const podSpecOf = (pod: KubeObject): Record<string, unknown> => (pod['spec'] as Record<string, unknown> | undefined) ?? {}

/** Whether each claim template is mounted from this pod's claim. */
export function storageMatches(set: KubeObject, pod: KubeObject): boolean {
  const ordinal = ordinalOf(pod)
  if (ordinal < 0) return false
  const volumes = (podSpecOf(pod)['volumes'] as Volume[] | undefined) ?? []
  return (setSpecOf(set).volumeClaimTemplates ?? []).every((template) => {
    const volume = volumes.find((v) => v.name === template.metadata?.name)
    return volume?.persistentVolumeClaim?.claimName === claimName(set, template, ordinal)
  })
}

/** The pod's volumes with each claim template's in place of a template volume of the same name. */
export function updateStorage(set: KubeObject, pod: KubeObject): void {
  const spec = podSpecOf(pod)
  const claims = claimsFor(set, ordinalOf(pod))
  const names = new Set(claims.map((c) => c.volume))
  const kept = ((spec['volumes'] as Volume[] | undefined) ?? []).filter((v) => !names.has(v.name ?? ''))
  const volumes = [...claims.map(({ volume, claim }) => ({ name: volume, persistentVolumeClaim: { claimName: claim.metadata.name } })), ...kept]
  if (volumes.length) spec['volumes'] = volumes
  pod['spec'] = spec
}

export function identityMatches(set: KubeObject, pod: KubeObject): boolean {
  const { parent, ordinal } = parentAndOrdinal(pod)
  return (
    ordinal >= 0 &&
    parent === set.metadata.name &&
    pod.metadata.name === podName(set, ordinal) &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[POD_NAME_LABEL] === pod.metadata.name &&
    pod.metadata.labels?.[POD_INDEX_LABEL] === String(ordinal)
  )
}

export function updateIdentity(set: KubeObject, pod: KubeObject): void {
  const ordinal = ordinalOf(pod)
  pod.metadata.name = podName(set, ordinal)
  pod.metadata.namespace = set.metadata.namespace ?? ''
  pod.metadata.labels = { ...pod.metadata.labels, [POD_NAME_LABEL]: pod.metadata.name, [POD_INDEX_LABEL]: String(ordinal) }
}

/** A new pod of the set at `ordinal`, from `template`, at revision `revision` (upstream's newVersionedStatefulSetPod once the template is chosen). */
export function newPod(set: KubeObject, template: PodTemplate, ordinal: number, revision: string): KubeObject {
  const meta = template.metadata ?? {}
  const name = podName(set, ordinal)
  const serviceName = setSpecOf(set).serviceName
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${set.metadata.name}-`,
      namespace: set.metadata.namespace ?? '',
      labels: { ...(meta.labels ?? {}) },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [controllerRefTo(set)],
    },
    spec: { ...structuredClone(template.spec ?? {}), hostname: name, ...(serviceName ? { subdomain: serviceName } : {}) },
  }
  updateIdentity(set, pod)
  updateStorage(set, pod)
  pod.metadata.labels = { ...pod.metadata.labels, [REVISION_LABEL]: revision }
  return pod
}

/** The counts a list of the set's pods adds to the status (upstream's computeReplicaStatus). */
export interface ReplicaCounts {
  replicas: number
  readyReplicas: number
  availableReplicas: number
  currentReplicas: number
  updatedReplicas: number
}

export function countReplicas(pods: readonly KubeObject[], minReadySeconds: number, now: Date, current: string, update: string): ReplicaCounts {
  const counts: ReplicaCounts = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 }
  for (const pod of pods) {
    if (isCreated(pod)) counts.replicas++
    if (isRunningAndReady(pod)) {
      counts.readyReplicas++
      if (isRunningAndAvailable(pod, minReadySeconds, now)) counts.availableReplicas++
    }
    if (isCreated(pod) && !isTerminating(pod)) {
      if (revisionOfPod(pod) === current) counts.currentReplicas++
      if (revisionOfPod(pod) === update) counts.updatedReplicas++
    }
  }
  return counts
}

/**
 * The owner references a claim should carry under the set's retention
 * policy (upstream's updateClaimOwnerRefForSetAndPod): none for Retain;
 * the set for whenDeleted Delete while the pod is in range; the pod once it
 * is scaled away for whenScaled Delete. Undefined when another controller
 * owns the claim and it is left alone.
 */
export function claimOwners(claim: KubeObject, set: KubeObject, pod: KubeObject): OwnerReference[] | undefined {
  const refs = claim.metadata.ownerReferences ?? []
  const ours = (ref: OwnerReference): boolean => (ref.kind === 'StatefulSet' && ref.name === set.metadata.name) || (ref.kind === 'Pod' && ref.name === pod.metadata.name)
  if (refs.some((ref) => ref.controller === true && !ours(ref))) return undefined
  if (refs.some((ref) => ours(ref) && ref.uid !== set.metadata.uid && ref.uid !== pod.metadata.uid)) return undefined
  const policy = setSpecOf(set).persistentVolumeClaimRetentionPolicy ?? {}
  const scaledDown = !inOrdinalRange(set, pod)
  const wanted = refs.filter((ref) => !ours(ref))
  if (policy.whenScaled === 'Delete' && scaledDown && pod.metadata.uid) wanted.push(controllerRefTo(pod))
  else if (policy.whenDeleted === 'Delete' && !(policy.whenScaled === 'Delete' && scaledDown)) wanted.push(controllerRefTo(set))
  return wanted
}
