/**
 * The TTL-after-finished controller (upstream's
 * pkg/controller/ttlafterfinished): deletes a Job that finished (Complete
 * or Failed) once spec.ttlSecondsAfterFinished has passed since the
 * finishing condition's transition. Before deleting it reads the Job
 * afresh, since its TTL may have changed, and deletes with foreground
 * propagation and the uid as precondition, as upstream does, so the Job
 * goes only once its pods are gone.
 */
import type { KubeObject } from '../../machinery/object.js'
import { jobs as jobEntry } from '../../resources/groups/batch.js'
import { onClockJump } from './clock-jumps.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { conditionsOf, isNotFound, keyOf, splitKey } from './object-keys.js'
import { WorkQueue } from './work-queue.js'

export const ttlAfterFinishedController: WorkloadController = {
  name: 'ttl-after-finished',
  serviceAccount: 'ttl-after-finished-controller',
  onByDefault: true,
  async start(ctx) {
    const jobs = ctx.informers.informer({ group: 'batch', version: 'v1', resource: 'jobs' })
    const queue: WorkQueue = new WorkQueue((key) => cleanUp(ctx, key, (job) => jobs.get(job.namespace, job.name), queue), { logger: ctx.logger, name: 'ttl-after-finished' })
    await jobs.synced
    const consider = (job: KubeObject): void => {
      if (expiresAt(job) !== undefined) queue.add(keyOf(job))
    }
    const stopHandlers = jobs.addHandlers({ onAdd: consider, onUpdate: (_, job) => consider(job) })
    const stopJumps = onClockJump(ctx.now, () => jobs.list().forEach(consider))
    return () => {
      stopHandlers()
      stopJumps()
      queue.stop()
    }
  },
}

/** When the Job may be deleted: undefined while it runs, has no TTL or is being deleted. */
function expiresAt(job: KubeObject): number | undefined {
  const ttl = (job['spec'] as { ttlSecondsAfterFinished?: unknown } | undefined)?.ttlSecondsAfterFinished
  if (typeof ttl !== 'number' || job.metadata.deletionTimestamp) return undefined
  const finished = conditionsOf(job['status']).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
  if (!finished?.lastTransitionTime) return undefined
  return Date.parse(finished.lastTransitionTime) + ttl * 1000
}

async function cleanUp(ctx: ControllerContext, key: string, cached: (at: { namespace: string; name: string }) => KubeObject | undefined, queue: WorkQueue): Promise<void> {
  const at = splitKey(key)
  const job = cached(at)
  if (!job || !due(ctx, job, queue, key)) return
  let fresh: KubeObject
  try {
    fresh = await ctx.client.get(jobEntry, at.namespace, at.name)
  } catch (err) {
    if (isNotFound(err)) return
    throw err
  }
  if (!due(ctx, fresh, queue, key)) return
  try {
    await ctx.client.delete(jobEntry, at.namespace, at.name, { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid ?? '' } })
  } catch (err) {
    if (!isNotFound(err)) throw err
  }
}

/** Whether the TTL ran out; when it will later, the key comes back then. */
function due(ctx: ControllerContext, job: KubeObject, queue: WorkQueue, key: string): boolean {
  const expires = expiresAt(job)
  if (expires === undefined) return false
  const left = expires - ctx.now().getTime()
  if (left <= 0) return true
  queue.addAfter(key, left)
  return false
}
