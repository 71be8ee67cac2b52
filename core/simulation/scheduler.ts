/**
 * A scheduler for simulated clusters (a small part of kube-scheduler): a
 * pending pod of the default scheduler goes to the least-loaded node that
 * fits it (its resource requests within the node's allocatable minus what
 * is bound there, its pod count, its nodeSelector, its required node
 * affinity terms on labels and on the node's name, its host ports free
 * there, the node's NoSchedule and NoExecute taints it tolerates, a
 * cordoned node only for a pod tolerating
 * node.kubernetes.io/unschedulable), bound through pods/binding
 * as `system:kube-scheduler`. A pod that fits nowhere stays Pending with
 * upstream's PodScheduled=False Unschedulable condition and a
 * FailedScheduling event, and is tried again when a node or a pod changes,
 * after a pause of its own that doubles from 1 s to 10 s with each failed
 * try (upstream's pod backoff): thousands of such pods would otherwise all
 * be tried again on every pod that finishes or goes.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import type { EventRecorder } from '../controllers/workloads/events.js'
import { matchesNodeAffinity, taintsOf, tolerationsOf, toleratesTaint, untoleratedTaint } from '../controllers/workloads/node-fit.js'
import { WorkQueue } from '../controllers/workloads/work-queue.js'
import type { Logger } from '../logging/logger.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../machinery/object.js'
import { sameJson } from '../machinery/same-json.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { nodes as nodeEntry } from '../resources/core/nodes.js'
import { quantityValue } from '../resources/core/pod-spec-resources.js'
import { pods as podEntry } from '../resources/core/pods.js'
import { hostPortTaken } from './host-ports.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

const UNSCHEDULABLE_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }

export const SCHEDULER_IDENTITY = { username: 'system:kube-scheduler', groups: ['system:authenticated'] }

/** The pod's requests: the sum over its containers, or an init container's where larger, as upstream counts them. */
export function podRequests(pod: KubeObject): Record<string, number> {
  const spec = obj(pod['spec'])
  const sum: Record<string, number> = {}
  for (const c of list(spec['containers'])) {
    for (const [name, q] of Object.entries(obj(obj(c['resources'])['requests']))) sum[name] = (sum[name] ?? 0) + quantityValue(q)
  }
  for (const c of list(spec['initContainers'])) {
    for (const [name, q] of Object.entries(obj(obj(c['resources'])['requests']))) sum[name] = Math.max(sum[name] ?? 0, quantityValue(q))
  }
  return sum
}

/** Why `node` cannot take `pod`, in kube-scheduler's words; undefined when it can. */
export function unfit(pod: KubeObject, node: KubeObject, bound: readonly KubeObject[]): string | undefined {
  const spec = obj(pod['spec'])
  const tolerations = tolerationsOf(spec)
  // A cordoned node takes only pods tolerating its unschedulable taint (upstream's NodeUnschedulable plugin).
  if (obj(node['spec'])['unschedulable'] === true && !tolerations.some((t) => toleratesTaint(t, UNSCHEDULABLE_TAINT))) return 'node(s) were unschedulable'
  const taint = untoleratedTaint(taintsOf(node), tolerations, ['NoSchedule', 'NoExecute'])
  if (taint) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`
  if (!matchesNodeAffinity(spec, node)) return "node(s) didn't match Pod's node affinity/selector"
  if (hostPortTaken(pod, bound)) return "node(s) didn't have free ports for the requested pod ports"
  const allocatable = obj(obj(node['status'])['allocatable'])
  if (bound.length + 1 > quantityValue(allocatable['pods'] ?? '110')) return 'Too many pods'
  const wanted = podRequests(pod)
  for (const [name, amount] of Object.entries(wanted)) {
    if (amount <= 0) continue
    const used = bound.reduce((sum, p) => sum + (podRequests(p)[name] ?? 0), 0)
    if (used + amount > quantityValue(allocatable[name] ?? '0')) return `Insufficient ${name}`
  }
  return undefined
}

const isReadyNode = (node: KubeObject): boolean => !node.metadata.deletionTimestamp && list(obj(node['status'])['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True')

const isPendingForUs = (pod: KubeObject): boolean => {
  const spec = obj(pod['spec'])
  return !spec['nodeName'] && (spec['schedulerName'] ?? 'default-scheduler') === 'default-scheduler' && !pod.metadata.deletionTimestamp
}

/** Upstream's pod backoff: 1 s after the first failed try, doubling up to 10 s. */
const FIRST_BACKOFF_MS = 1_000
const MAX_BACKOFF_MS = 10_000
export const backoffAfter = (failedTries: number): number => Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, failedTries - 1), MAX_BACKOFF_MS)

/** Whether a pod's change can make it fit where it did not (upstream ignores a change of status alone). */
const schedulingChanged = (before: KubeObject, after: KubeObject): boolean =>
  !sameJson(before['spec'], after['spec']) || !sameJson(before.metadata.labels, after.metadata.labels) || !sameJson(before.metadata.annotations, after.metadata.annotations)

/** Whether a node's change can make a pod fit where it did not (upstream's nodeSchedulingPropertiesChange); a heartbeat cannot. */
const nodeFitChanged = (before: KubeObject, after: KubeObject): boolean => {
  const conditions = (node: KubeObject) => list(obj(node['status'])['conditions']).map((c) => `${String(c['type'])}=${String(c['status'])}`)
  return (
    !sameJson(before['spec'], after['spec']) ||
    !sameJson(before.metadata.labels, after.metadata.labels) ||
    !sameJson(obj(before['status'])['allocatable'], obj(after['status'])['allocatable']) ||
    !sameJson(conditions(before), conditions(after)) ||
    Boolean(after.metadata.deletionTimestamp) !== Boolean(before.metadata.deletionTimestamp)
  )
}

const finished = (pod: KubeObject): boolean => ['Succeeded', 'Failed'].includes(String(obj(pod['status'])['phase']))

export interface SchedulerContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly events: EventRecorder
  readonly now: () => Date
  readonly logger: Logger
}

export async function startScheduler({ client, informers, events, now, logger }: SchedulerContext): Promise<() => void> {
  const scheduler = client.as(SCHEDULER_IDENTITY, 'kube-scheduler')
  const podInformer = informers.informer(podEntry)
  const nodeInformer = informers.informer(nodeEntry)
  podInformer.addIndex('node', (pod) => {
    const node = obj(pod['spec'])['nodeName']
    return typeof node === 'string' && node && !finished(pod) ? [node] : []
  })
  const key = (pod: KubeObject) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`
  /** Pods bound by this scheduler that the informer has not shown bound yet, by node. */
  const assumed = new Map<string, KubeObject[]>()
  /** Pods that fit nowhere at their last try: how many tries failed, and when the last was. */
  const unschedulable = new Map<string, { failedTries: number; lastTriedAt: number }>()
  /** Pods whose next try is already timed. */
  const backingOff = new Set<string>()

  const schedule = async (podKey: string): Promise<void> => {
    backingOff.delete(podKey)
    const [namespace = '', name = ''] = podKey.split('/')
    const pod = podInformer.get(namespace, name)
    if (!pod || !isPendingForUs(pod)) {
      unschedulable.delete(podKey)
      return
    }
    const candidates = nodeInformer.list().filter(isReadyNode)
    const reasons = new Map<string, number>()
    let best: { node: KubeObject; load: number } | undefined
    for (const node of candidates) {
      const nodeName = node.metadata.name ?? ''
      const bound = [...podInformer.byIndex('node', nodeName), ...(assumed.get(nodeName) ?? [])]
      const why = unfit(pod, node, bound)
      if (why) reasons.set(why, (reasons.get(why) ?? 0) + 1)
      else if (!best || bound.length < best.load) best = { node, load: bound.length }
    }
    if (!best) {
      const failedTries = (unschedulable.get(podKey)?.failedTries ?? 0) + 1
      unschedulable.set(podKey, { failedTries, lastTriedAt: now().getTime() })
      logger.debug({ pod: podKey, failedTries }, 'the simulated scheduler found no node for the pod')
      return markUnschedulable(pod, candidates.length, reasons)
    }
    unschedulable.delete(podKey)
    const nodeName = best.node.metadata.name ?? ''
    try {
      await scheduler.create(podEntry, namespace, { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace }, target: { kind: 'Node', name: nodeName } } as KubeObject, { subresource: 'binding' })
      assumed.set(nodeName, [...(assumed.get(nodeName) ?? []), pod])
      events.record({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`)
    } catch (err) {
      // Bound or gone meanwhile: nothing to do.
      if (!hasStatusCode(err, 409) && !hasStatusCode(err, 404)) throw err
    }
  }

  const markUnschedulable = async (pod: KubeObject, nodeCount: number, reasons: Map<string, number>): Promise<void> => {
    const detail = [...reasons].sort(([a], [b]) => (a < b ? -1 : 1)).map(([why, n]) => `${n} ${why}`).join(', ')
    const message = `0/${nodeCount} nodes are available${detail ? `: ${detail}` : ''}.`
    const status = obj(pod['status'])
    const conditions = list(status['conditions'])
    const current = conditions.find((c) => c['type'] === 'PodScheduled')
    if (current?.['status'] === 'False' && current['message'] === message) return
    const condition = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: formatTimestamp(now()) }
    try {
      await scheduler.updateStatus(podEntry, pod.metadata.namespace ?? '', { ...pod, status: { ...status, phase: 'Pending', conditions: [...conditions.filter((c) => c['type'] !== 'PodScheduled'), condition] } })
      events.record({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'FailedScheduling', message)
    } catch (err) {
      if (!hasStatusCode(err, 409) && !hasStatusCode(err, 404)) throw err
    }
  }

  const queue = new WorkQueue(schedule, { logger, name: 'simulated-scheduler', concurrency: 1 })
  /** A try for a pod that may fit now: at once when it has not failed, else once its backoff has passed. */
  const tryAgain = (podKey: string): void => {
    const failed = unschedulable.get(podKey)
    if (!failed) return queue.add(podKey)
    if (backingOff.has(podKey)) return
    backingOff.add(podKey)
    queue.addAfter(podKey, failed.lastTriedAt + backoffAfter(failed.failedTries) - now().getTime())
  }
  /** Room may have come free, or a node changed: every pod that fit nowhere is tried again, each after its backoff. */
  const retryUnschedulable = (): void => {
    for (const podKey of unschedulable.keys()) tryAgain(podKey)
  }
  await Promise.all([podInformer.synced, nodeInformer.synced])
  const unsubscribe = [
    podInformer.addHandlers({
      onAdd: (pod) => {
        if (isPendingForUs(pod)) queue.add(key(pod))
      },
      onUpdate: (before, pod) => {
        const node = obj(pod['spec'])['nodeName']
        if (typeof node === 'string' && node) assumed.set(node, (assumed.get(node) ?? []).filter((p) => key(p) !== key(pod)))
        if (isPendingForUs(pod)) {
          // Its own Unschedulable condition, written by the last try, is no reason for another.
          if (!unschedulable.has(key(pod)) || schedulingChanged(before, pod)) queue.add(key(pod))
        } else {
          unschedulable.delete(key(pod))
          // A pod that finished frees room on its node.
          if (finished(pod) && !finished(before)) retryUnschedulable()
        }
      },
      // A pod gone frees room on its node.
      onDelete: (pod) => {
        unschedulable.delete(key(pod))
        retryUnschedulable()
      },
    }),
    nodeInformer.addHandlers({
      onAdd: retryUnschedulable,
      onUpdate: (before, node) => {
        if (nodeFitChanged(before, node)) retryUnschedulable()
      },
      onDelete: retryUnschedulable,
    }),
  ]
  for (const pod of podInformer.list()) if (isPendingForUs(pod)) queue.add(key(pod))
  return () => {
    unsubscribe.forEach((stop) => stop())
    queue.stop()
  }
}
