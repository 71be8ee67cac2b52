/**
 * The Job controller (upstream's pkg/controller/job): runs a Job's pods
 * until enough succeed or too many fail. Each pod carries the
 * job-tracking finalizer until the controller has counted it, so a pod
 * deleted early is still counted once: its uid goes to
 * status.uncountedTerminatedPods, the finalizer comes off, then the uid
 * moves into succeeded or failed. A finished Job gets SuccessCriteriaMet
 * or FailureTarget at once and Complete or Failed when no pod of it runs.
 */
import type { SharedInformer } from '../../client/informer.js'
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject } from '../../machinery/label-selector.js'
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { jobs as jobEntry } from '../../resources/groups/batch.js'
import { onClockJump } from './clock-jumps.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { NamedExpectations } from './named-expectations.js'
import { finishedAt, PodFailureBackoff } from './job-backoff.js'
import {
  completionIndexOf,
  formatIndexes,
  hasTrackingFinalizer,
  isActive,
  isFailed,
  isFinished,
  isReady,
  isSucceeded,
  isTerminating,
  JOB_TRACKING_FINALIZER,
  parseIndexes,
  podFromTemplate,
} from './job-pods.js'
import { BACKOFF_LIMIT_EXCEEDED, DEADLINE_EXCEEDED, recordedVerdict, setCondition, SUCCESS, type Verdict } from './job-status.js'
import { controllerOf, hasTrueCondition, isConflict, isNotFound, keyOf, splitKey } from './object-keys.js'
import { claim } from './owned.js'
import { WorkQueue } from './work-queue.js'

const BY_JOB = 'job-controller:job'

const selectorOf = (job: KubeObject): LabelSelector => labelSelectorFromObject((job['spec'] as { selector?: LabelSelectorObject } | undefined)?.selector)

type Status = Record<string, unknown> & { uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] } }

export const jobController: WorkloadController = {
  name: 'job',
  serviceAccount: 'job-controller',
  onByDefault: true,
  async start(ctx) {
    const jobs = ctx.informers.informer({ group: 'batch', version: 'v1', resource: 'jobs' })
    const pods = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
    pods.addIndex(BY_JOB, (pod) => {
      const owner = controllerOf(pod)
      return owner?.kind === 'Job' && owner.apiVersion.startsWith('batch/') ? [`${pod.metadata.namespace}/${owner.name}`] : []
    })
    const state: JobState = { expectations: new NamedExpectations(), backoff: new PodFailureBackoff(), queue: undefined as unknown as WorkQueue }
    state.queue = new WorkQueue((key) => syncJob(ctx, jobs, pods, state, key), { logger: ctx.logger, name: 'job' })
    const queue = state.queue
    await Promise.all([jobs.synced, pods.synced])
    const enqueueOwner = (pod: KubeObject): void => {
      const owner = controllerOf(pod)
      if (owner?.kind === 'Job') queue.add(`${pod.metadata.namespace}/${owner.name}`)
    }
    // A pod without a controller goes to every Job whose selector matches it, one of which may adopt it (upstream's getPodJobs).
    const enqueueOwnerOrAdopters = (pod: KubeObject): void => {
      if (controllerOf(pod)) return enqueueOwner(pod)
      for (const job of jobs.list(pod.metadata.namespace ?? '')) if (selectorOf(job).matches(pod.metadata.labels)) queue.add(keyOf(job))
    }
    const stopJobs = jobs.addHandlers({ onAdd: (j) => queue.add(keyOf(j)), onUpdate: (_, j) => queue.add(keyOf(j)), onDelete: (j) => queue.add(keyOf(j)) })
    const stopPods = pods.addHandlers({
      onAdd: enqueueOwnerOrAdopters,
      onUpdate: (old, pod) => (enqueueOwner(old), enqueueOwnerOrAdopters(pod)),
      onDelete: enqueueOwner,
    })
    // A deadline or back-off reached by a clock moved by hand fires no timer: look again.
    const stopJumps = onClockJump(ctx.now, () => {
      for (const j of jobs.list()) if (!isFinishedJob(j)) queue.add(keyOf(j))
    })
    return () => {
      stopJobs()
      stopPods()
      stopJumps()
      queue.stop()
    }
  },
}

/** What the controller keeps between passes: writes not yet seen, failure back-off, the queue. */
interface JobState {
  expectations: NamedExpectations
  backoff: PodFailureBackoff
  queue: WorkQueue
}

async function syncJob(ctx: ControllerContext, jobs: SharedInformer, podInformer: SharedInformer, state: JobState, key: string): Promise<void> {
  const { expectations, queue } = state
  const { namespace, name } = splitKey(key)
  const job = jobs.get(namespace, name)
  const owned = podInformer.byIndex(BY_JOB, key).filter((p) => !job || controllerOf(p)?.uid === job.metadata.uid)
  // A Job gone, going or finished keeps no pod from going: its pods lose the finalizer.
  if (!job || job.metadata.deletionTimestamp || isFinishedJob(job)) {
    if (!job) {
      expectations.forget(key)
      state.backoff.forget(key)
    }
    await removeFinalizers(ctx, owned.filter(hasTrackingFinalizer))
    return
  }
  const present = (podName: string) => podInformer.get(namespace, podName) !== undefined
  const deleting = (podName: string) => !!podInformer.get(namespace, podName)?.metadata.deletionTimestamp
  if (!expectations.satisfied(key, present, deleting)) return
  try {
    // Orphans the selector matches are adopted (with the tracking finalizer), owned pods it no longer matches released.
    const claimed = await claim(podInformer.list(namespace), {
      client: ctx.client,
      resource: podEntry,
      owner: job,
      selector: selectorOf(job),
      recheckOwner: () => ctx.client.get(jobEntry, namespace, name).catch(() => undefined),
      finalizers: [JOB_TRACKING_FINALIZER],
    })
    await reconcile(ctx, job, claimed, state, key)
  } catch (err) {
    if (!isConflict(err)) throw err
    queue.add(key)
  }
}

const isFinishedJob = (job: KubeObject): boolean => hasTrueCondition(job['status'], 'Complete') || hasTrueCondition(job['status'], 'Failed')

async function reconcile(ctx: ControllerContext, job: KubeObject, owned: KubeObject[], state: JobState, key: string): Promise<void> {
  const { expectations, queue } = state
  const now = ctx.now()
  const spec = job['spec'] as Record<string, unknown>
  const status = structuredClone((job['status'] as Status | undefined) ?? {}) as Status
  const indexed = spec['completionMode'] === 'Indexed'
  const completions = typeof spec['completions'] === 'number' ? spec['completions'] : undefined
  const parallelism = typeof spec['parallelism'] === 'number' ? spec['parallelism'] : 1
  const uncountedSucceeded = new Set(status.uncountedTerminatedPods?.succeeded ?? [])
  const uncountedFailed = new Set(status.uncountedTerminatedPods?.failed ?? [])
  const completed = parseIndexes(status['completedIndexes'])

  // Finished pods still held by the finalizer are counted from here on.
  let newlySucceeded = 0
  const newFailures: number[] = []
  for (const pod of owned) {
    const uid = pod.metadata.uid ?? ''
    if (!hasTrackingFinalizer(pod) || !isFinished(pod) || uncountedSucceeded.has(uid) || uncountedFailed.has(uid)) continue
    if (isSucceeded(pod)) {
      const index = completionIndexOf(pod)
      if (indexed && (index === undefined || index >= (completions ?? 0) || completed.has(index))) uncountedFailed.add(uid)
      else {
        uncountedSucceeded.add(uid)
        newlySucceeded++
        if (indexed) completed.add(index!)
      }
    } else if (isFailed(pod)) {
      uncountedFailed.add(uid)
      newFailures.push(finishedAt(pod, now.getTime()))
    }
  }
  state.backoff.record(key, newlySucceeded, newFailures)
  const active = owned.filter(isActive)
  const succeeded = indexed ? completed.size : num(status['succeeded']) + uncountedSucceeded.size
  const failed = num(status['failed']) + uncountedFailed.size
  const suspended = spec['suspend'] === true

  let verdict = recordedVerdict(job)
  if (!verdict && !suspended) verdict = judge(spec, status, { succeeded, failed, activeCount: active.length, completions, indexed }, now)
  if (verdict && !recordedVerdict(job)) {
    setCondition(status, verdict.interim, 'True', verdict.reason, verdict.message, now)
  }

  let remaining = active
  if (verdict || suspended) {
    await deletePods(ctx, job, active, expectations, key)
    remaining = []
    if (suspended && !verdict && setCondition(status, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) ctx.events.record(job, 'Normal', 'Suspended', 'Job suspended')
  } else {
    if (hasTrueCondition(status, 'Suspended')) {
      setCondition(status, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)
      ctx.events.record(job, 'Normal', 'Resumed', 'Job resumed')
      // The deadline runs again from the resumption.
      status['startTime'] = formatTimestamp(now)
    }
    status['startTime'] ??= formatTimestamp(now)
    const wait = state.backoff.remainingMs(key, now.getTime())
    if (wait > 0) queue.addAfter(key, wait)
    remaining = await managePods(ctx, job, active, { indexed, completions, parallelism, succeeded, completed, mayCreate: wait === 0 }, expectations, key)
  }

  status['active'] = remaining.length
  status['ready'] = remaining.filter(isReady).length
  status['terminating'] = owned.filter(isTerminating).length
  if (indexed) status['completedIndexes'] = formatIndexes(completed)
  // Empty lists are left out, as upstream's omitempty leaves them.
  status['uncountedTerminatedPods'] = {
    ...(uncountedSucceeded.size ? { succeeded: [...uncountedSucceeded] } : {}),
    ...(uncountedFailed.size ? { failed: [...uncountedFailed] } : {}),
  }
  let written = await writeStatus(ctx, job, status)

  // Counted in status, the finished pods can go; then their uids become numbers.
  if (uncountedSucceeded.size || uncountedFailed.size) {
    const counted = owned.filter((p) => uncountedSucceeded.has(p.metadata.uid ?? '') || uncountedFailed.has(p.metadata.uid ?? ''))
    await removeFinalizers(ctx, counted.filter(hasTrackingFinalizer))
    const next = structuredClone(written['status'] as Status)
    next['succeeded'] = indexed ? completed.size : num(next['succeeded']) + uncountedSucceeded.size
    next['failed'] = num(next['failed']) + uncountedFailed.size
    next.uncountedTerminatedPods = {}
    written = await writeStatus(ctx, written, next)
  }

  // The terminal condition waits until no pod of the Job runs or is being deleted.
  const stillRunning = remaining.length > 0 || owned.some((p) => isTerminating(p) && hasTrackingFinalizer(p) && !uncountedFailed.has(p.metadata.uid ?? ''))
  if (verdict && !stillRunning) await finish(ctx, written, verdict, now)
  else scheduleDeadline(spec, written, now, queue, key)
}

/** The verdict the counts give, if the Job is done (upstream's order: failures first, then the deadline, then success). */
function judge(spec: Record<string, unknown>, status: Status, counts: { succeeded: number; failed: number; activeCount: number; completions: number | undefined; indexed: boolean }, now: Date): Verdict | undefined {
  const backoffLimit = typeof spec['backoffLimit'] === 'number' ? spec['backoffLimit'] : 6
  if (counts.failed > backoffLimit) return BACKOFF_LIMIT_EXCEEDED
  const deadline = spec['activeDeadlineSeconds']
  const start = typeof status['startTime'] === 'string' ? Date.parse(status['startTime']) : undefined
  if (typeof deadline === 'number' && start !== undefined && now.getTime() - start >= deadline * 1000) return DEADLINE_EXCEEDED
  if (counts.completions === undefined) return counts.succeeded > 0 && counts.activeCount === 0 ? SUCCESS : undefined
  return counts.succeeded >= counts.completions ? SUCCESS : undefined
}

interface Shape {
  indexed: boolean
  completions: number | undefined
  parallelism: number
  succeeded: number
  completed: Set<number>
  /** False while failures hold new pods back. */
  mayCreate: boolean
}

/** Creates the pods the Job lacks and deletes those beyond what it wants; answers the pods left running. */
async function managePods(ctx: ControllerContext, job: KubeObject, active: KubeObject[], shape: Shape, expectations: NamedExpectations, key: string): Promise<KubeObject[]> {
  if (shape.indexed) {
    const running = new Set(active.map(completionIndexOf))
    const missing: number[] = []
    for (let i = 0; shape.mayCreate && i < (shape.completions ?? 0) && missing.length + active.length < shape.parallelism && missing.length < MAX_PODS_PER_SYNC; i++)
      if (!running.has(i) && !shape.completed.has(i)) missing.push(i)
    return [...active, ...(await createPods(ctx, job, missing, expectations, key))]
  }
  // Without completions, once one pod succeeded no new pod starts (upstream's work-queue Jobs).
  let want = shape.completions === undefined ? (shape.succeeded > 0 ? active.length : shape.parallelism) : Math.min(shape.parallelism, shape.completions - shape.succeeded)
  want = Math.max(0, want)
  if (active.length > want) {
    // Pods not ready yet go first, then the newest.
    const order = [...active].sort((a, b) => Number(isReady(a)) - Number(isReady(b)) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))
    const extra = order.slice(0, Math.min(active.length - want, MAX_PODS_PER_SYNC))
    await deletePods(ctx, job, extra, expectations, key)
    return active.filter((p) => !extra.includes(p))
  }
  if (!shape.mayCreate) return active
  const created = await createPods(ctx, job, Array.from({ length: Math.min(want - active.length, MAX_PODS_PER_SYNC) }, () => undefined), expectations, key)
  return [...active, ...created]
}

/**
 * The most pods one sync creates or deletes (upstream's
 * MaxPodCreateDeletePerSync): a Job of parallelism 2^31-1 started every
 * create at once and ended the process. The pods it wants beyond come in
 * the next syncs, as the ones created are seen.
 */
const MAX_PODS_PER_SYNC = 500

/**
 * Creates in batches of 1, 2, 4 ... (upstream's slow start), stopping at
 * the first batch with a failure: a Job whose pods are all refused (quota,
 * admission) costs one create, not hundreds.
 */
async function createPods(ctx: ControllerContext, job: KubeObject, indexes: (number | undefined)[], expectations: NamedExpectations, key: string): Promise<KubeObject[]> {
  const namespace = job.metadata.namespace ?? ''
  const created: KubeObject[] = []
  for (let at = 0, batch = 1; at < indexes.length; at += batch, batch *= 2) {
    const chunk = indexes.slice(at, at + batch)
    const results = await Promise.allSettled(chunk.map((index) => ctx.client.create(podEntry, namespace, podFromTemplate(job, index))))
    for (const result of results) {
      if (result.status === 'fulfilled') {
        expectations.expectCreate(key, result.value.metadata.name ?? '')
        ctx.events.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${result.value.metadata.name}`)
        created.push(result.value)
      } else ctx.events.record(job, 'Warning', 'FailedCreate', `Error creating: ${errorMessage(result.reason)}`)
    }
    const failure = results.find((r) => r.status === 'rejected')
    if (failure) throw failure.reason
  }
  return created
}

async function deletePods(ctx: ControllerContext, job: KubeObject, victims: KubeObject[], expectations: NamedExpectations, key: string): Promise<void> {
  await Promise.all(
    victims.map(async (pod) => {
      try {
        await ctx.client.delete(podEntry, pod.metadata.namespace ?? '', pod.metadata.name ?? '', { preconditions: { uid: pod.metadata.uid ?? '' } })
        expectations.expectDelete(key, pod.metadata.name ?? '')
        ctx.events.record(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`)
      } catch (err) {
        if (!isNotFound(err)) {
          ctx.events.record(job, 'Warning', 'FailedDelete', `Error deleting: ${errorMessage(err)}`)
          throw err
        }
      }
    }),
  )
}

async function removeFinalizers(ctx: ControllerContext, pods: KubeObject[]): Promise<void> {
  await Promise.all(
    pods.map(async (pod) => {
      const finalizers = (pod.metadata.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER)
      const patch = { metadata: { uid: pod.metadata.uid, finalizers: finalizers.length ? finalizers : null } }
      try {
        await ctx.client.patch(podEntry, pod.metadata.namespace ?? '', pod.metadata.name ?? '', 'merge', patch)
      } catch (err) {
        // Gone already: nothing of ours to release.
        if (!isNotFound(err)) throw err
      }
    }),
  )
}

async function finish(ctx: ControllerContext, job: KubeObject, verdict: Verdict, now: Date): Promise<void> {
  const status = structuredClone(job['status'] as Status)
  setCondition(status, verdict.terminal, 'True', verdict.reason, verdict.message, now)
  if (verdict.terminal === 'Complete') status['completionTime'] = formatTimestamp(now)
  await writeStatus(ctx, job, status)
  if (verdict.terminal === 'Complete') ctx.events.record(job, 'Normal', 'Completed', 'Job completed')
  else ctx.events.record(job, 'Warning', verdict.reason, verdict.message)
}

/** Checks again when activeDeadlineSeconds runs out. */
function scheduleDeadline(spec: Record<string, unknown>, job: KubeObject, now: Date, queue: WorkQueue, key: string): void {
  const deadline = spec['activeDeadlineSeconds']
  const start = (job['status'] as Status | undefined)?.['startTime']
  if (typeof deadline !== 'number' || typeof start !== 'string' || spec['suspend'] === true) return
  queue.addAfter(key, Date.parse(start) + deadline * 1000 - now.getTime())
}

async function writeStatus(ctx: ControllerContext, job: KubeObject, status: Status): Promise<KubeObject> {
  if (JSON.stringify(status) === JSON.stringify(job['status'] ?? {})) return job
  return ctx.client.updateStatus(jobEntry, job.metadata.namespace ?? '', { ...job, status })
}

const num = (value: unknown): number => (typeof value === 'number' ? value : 0)
const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err))
