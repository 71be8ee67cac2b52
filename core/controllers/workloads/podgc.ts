/**
 * The pod garbage collector (upstream's pkg/controller/podgc), every 20
 * seconds and whenever a pod changes:
 * - beyond the threshold of finished pods (Succeeded or Failed; upstream's
 *   --terminated-pod-gc-threshold, 12500 here too), deletes the oldest;
 * - deletes the pods bound to a node that does not exist, once the node has
 *   been missing for the 40 s quarantine and a fresh read confirms it;
 * - deletes the pods being deleted that never got a node (no kubelet will
 *   ever finish them).
 * A pod it deletes unfinished is first marked Failed (with the
 * DisruptionTarget condition when its node is gone), as upstream marks it,
 * and is deleted with no grace period.
 */
import type { SharedInformer } from '../../client/informer.js'
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { nodes as nodeEntry } from '../../resources/core/nodes.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { onClockJump } from './clock-jumps.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { isConflict, isNotFound } from './object-keys.js'
import { WorkQueue } from './work-queue.js'

export const TERMINATED_POD_GC_THRESHOLD = 12_500
const CHECK_PERIOD_MS = 20_000
const QUARANTINE_MS = 40_000
const PASS = 'pass'

type Obj = Record<string, unknown>

export const podGcController: WorkloadController = {
  name: 'podgc',
  serviceAccount: 'pod-garbage-collector',
  onByDefault: true,
  async start(ctx) {
    const pods = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
    const nodes = ctx.informers.informer({ group: '', version: 'v1', resource: 'nodes' })
    /** When each missing node was first seen missing, by the controller's clock. */
    const missingSince = new Map<string, number>()
    const queue: WorkQueue = new WorkQueue(
      async () => {
        try {
          await collect(ctx, pods, nodes, missingSince)
        } finally {
          queue.addAfter(PASS, CHECK_PERIOD_MS)
        }
      },
      { logger: ctx.logger, name: 'pod-garbage-collector', concurrency: 1 },
    )
    await Promise.all([pods.synced, nodes.synced])
    const stopPods = pods.addHandlers({ onAdd: () => queue.add(PASS), onUpdate: () => queue.add(PASS) })
    const stopJumps = onClockJump(ctx.now, () => queue.add(PASS))
    queue.add(PASS)
    return () => {
      stopPods()
      stopJumps()
      queue.stop()
    }
  },
}

const phaseOf = (pod: KubeObject): string => ((pod['status'] as Obj | undefined)?.['phase'] as string | undefined) ?? ''
const isTerminated = (pod: KubeObject): boolean => phaseOf(pod) === 'Succeeded' || phaseOf(pod) === 'Failed'
const nodeNameOf = (pod: KubeObject): string => ((pod['spec'] as Obj | undefined)?.['nodeName'] as string | undefined) ?? ''

async function collect(ctx: ControllerContext, podInformer: SharedInformer, nodeInformer: SharedInformer, missingSince: Map<string, number>): Promise<void> {
  const pods = podInformer.list()
  await collectTerminated(ctx, pods)
  await collectOrphaned(ctx, pods, nodeInformer, missingSince)
  // Being deleted and never scheduled: nothing will ever finish them.
  for (const pod of pods) if (pod.metadata.deletionTimestamp && !nodeNameOf(pod)) await failAndDelete(ctx, pod)
}

async function collectTerminated(ctx: ControllerContext, pods: KubeObject[]): Promise<void> {
  const terminated = pods.filter((p) => isTerminated(p) && !p.metadata.deletionTimestamp)
  const excess = terminated.length - TERMINATED_POD_GC_THRESHOLD
  if (excess <= 0) return
  const oldest = terminated.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '')).slice(0, excess)
  for (const pod of oldest) await failAndDelete(ctx, pod)
}

async function collectOrphaned(ctx: ControllerContext, pods: KubeObject[], nodeInformer: SharedInformer, missingSince: Map<string, number>): Promise<void> {
  const now = ctx.now().getTime()
  const missing = new Set(pods.map(nodeNameOf).filter((node) => node && !nodeInformer.get('', node)))
  for (const node of missingSince.keys()) if (!missing.has(node)) missingSince.delete(node)
  for (const node of missing) {
    const since = missingSince.get(node) ?? now
    missingSince.set(node, since)
    if (now - since < QUARANTINE_MS || (await nodeExists(ctx, node))) continue
    const condition = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists', lastTransitionTime: formatTimestamp(ctx.now()) }
    for (const pod of pods) if (nodeNameOf(pod) === node) await failAndDelete(ctx, pod, condition)
  }
}

async function nodeExists(ctx: ControllerContext, name: string): Promise<boolean> {
  try {
    await ctx.client.get(nodeEntry, '', name)
    return true
  } catch (err) {
    if (isNotFound(err)) return false
    throw err
  }
}

/** Marks an unfinished pod Failed (with `condition`), then deletes it with no grace period. */
async function failAndDelete(ctx: ControllerContext, pod: KubeObject, condition?: Obj): Promise<void> {
  const namespace = pod.metadata.namespace ?? ''
  const name = pod.metadata.name ?? ''
  try {
    if (!isTerminated(pod)) {
      // A patch of the status, as upstream's: the bootstrap role grants pods/status patch, not update.
      const status: Obj = { phase: 'Failed', ...(condition ? { conditions: [condition] } : {}) }
      await ctx.client.patch(podEntry, namespace, name, 'strategic', { metadata: { uid: pod.metadata.uid }, status }, { subresource: 'status' })
    }
    await ctx.client.delete(podEntry, namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } })
    ctx.logger.info({ controller: 'pod-garbage-collector', pod: `${namespace}/${name}` }, 'force-deleted a pod')
  } catch (err) {
    // Changed or gone meanwhile: the next pass looks again.
    if (!isNotFound(err) && !isConflict(err)) throw err
  }
}
