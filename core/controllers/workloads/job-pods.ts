/**
 * A Job's pods as its controller sees them (upstream's job_controller.go and
 * indexed_job_utils.go): the pod it makes from the template, which of its
 * pods are active, finished or being deleted, and the completion indexes of
 * an Indexed Job written as upstream compresses them ("0-2,5").
 */
import type { KubeObject } from '../../machinery/object.js'

/** Holds a pod until the controller has counted it (upstream's batch.kubernetes.io/job-tracking). */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking'
export const COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index'
const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX'

type Obj = Record<string, unknown>

export const phaseOf = (pod: KubeObject): string => ((pod['status'] as Obj | undefined)?.['phase'] as string | undefined) ?? ''
export const isSucceeded = (pod: KubeObject): boolean => phaseOf(pod) === 'Succeeded'
/** A pod being deleted before it finished counts as failed (upstream's podReplacementPolicy TerminatingOrFailed). */
export const isFailed = (pod: KubeObject): boolean => phaseOf(pod) === 'Failed' || (!!pod.metadata.deletionTimestamp && !isSucceeded(pod))
export const isFinished = (pod: KubeObject): boolean => isSucceeded(pod) || isFailed(pod)
export const isActive = (pod: KubeObject): boolean => !isFinished(pod) && !pod.metadata.deletionTimestamp
export const hasTrackingFinalizer = (pod: KubeObject): boolean => pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) ?? false
/** Deleted but not yet finished: still running somewhere (status.terminating). */
export const isTerminating = (pod: KubeObject): boolean => !!pod.metadata.deletionTimestamp && phaseOf(pod) !== 'Succeeded' && phaseOf(pod) !== 'Failed'

export function isReady(pod: KubeObject): boolean {
  const conditions = ((pod['status'] as Obj | undefined)?.['conditions'] as Obj[] | undefined) ?? []
  return conditions.some((c) => c['type'] === 'Ready' && c['status'] === 'True')
}

export function completionIndexOf(pod: KubeObject): number | undefined {
  const text = pod.metadata.annotations?.[COMPLETION_INDEX_ANNOTATION]
  if (text === undefined || !/^\d+$/.test(text)) return undefined
  return Number(text)
}

/** The pod the Job's template describes, owned by the Job and held by the tracking finalizer. */
export function podFromTemplate(job: KubeObject, index: number | undefined): KubeObject {
  const spec = job['spec'] as Obj
  const template = structuredClone((spec['template'] as Obj | undefined) ?? {}) as { metadata?: Obj; spec?: Obj }
  const meta = template.metadata ?? {}
  const name = job.metadata.name ?? ''
  const labels = { ...((meta['labels'] as Record<string, string> | undefined) ?? {}) }
  const annotations = { ...((meta['annotations'] as Record<string, string> | undefined) ?? {}) }
  const podSpec = template.spec ?? {}
  if (index !== undefined) {
    annotations[COMPLETION_INDEX_ANNOTATION] = String(index)
    labels[COMPLETION_INDEX_ANNOTATION] = String(index)
    // Upstream names the pod's host after the index, so a headless Service can reach each index.
    podSpec['hostname'] = `${name}-${index}`
    for (const key of ['containers', 'initContainers'] as const) {
      for (const container of (podSpec[key] as Obj[] | undefined) ?? []) addIndexEnv(container)
    }
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: index !== undefined ? `${name}-${index}-` : `${name}-`,
      namespace: job.metadata.namespace,
      labels,
      annotations,
      finalizers: [JOB_TRACKING_FINALIZER],
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: podSpec,
  }
}

function addIndexEnv(container: Obj): void {
  const env = ((container['env'] as Obj[] | undefined) ?? []).filter((e) => e['name'] !== COMPLETION_INDEX_ENV)
  env.unshift({ name: COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${COMPLETION_INDEX_ANNOTATION}']` } } })
  container['env'] = env
}

/** "0-2,5" from {0,1,2,5}; empty for none. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b)
  const parts: string[] = []
  for (let i = 0; i < sorted.length; ) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  return parts.join(',')
}

export function parseIndexes(text: unknown): Set<number> {
  const indexes = new Set<number>()
  if (typeof text !== 'string') return indexes
  for (const part of text.split(',')) {
    const [from, to] = part.split('-').map(Number)
    if (from === undefined || !Number.isInteger(from)) continue
    for (let i = from; i <= (to ?? from); i++) indexes.add(i)
  }
  return indexes
}
