/**
 * The horizontal pod autoscaler (upstream's pkg/controller/podautoscaler),
 * for autoscaling/v2 HorizontalPodAutoscalers (v1 is a view of the same
 * objects). Each HPA is synced when it appears or its spec changes, then
 * every 15 s (upstream's --horizontal-pod-autoscaler-sync-period) and when
 * the clock is moved by hand:
 * - the target's `/scale` subresource is found through discovery (any kind
 *   with a scale subresource, custom resources included) and read through
 *   the client;
 * - out of [minReplicas, maxReplicas], the count is brought back in range;
 * - otherwise resource metrics (cpu, memory; Utilization or AverageValue)
 *   are listed as `metrics.k8s.io/v1beta1` PodMetrics through the client,
 *   so a metrics server registered as an APIService answers through the
 *   aggregator, and the count follows them (hpa-replicas.ts), stabilized
 *   and limited (hpa-scaling.ts);
 * - the status (currentReplicas, desiredReplicas, lastScaleTime,
 *   currentMetrics, conditions) and the events say what happened, in
 *   upstream's words.
 */
import type { SharedInformer } from '../../client/informer.js'
import type { ResourceRef } from '../../client/object-client.js'
import { parseLabelSelector } from '../../machinery/label-selector.js'
import { formatTimestamp, type KubeObject } from '../../machinery/object.js'
import { StatusError } from '../../machinery/status-error.js'
import { horizontalPodAutoscalersV2 as hpaEntry } from '../../resources/groups/autoscaling.js'
import { canonicalQuantity } from '../../resources/schema/quantity.js'
import { onClockJump } from './clock-jumps.js'
import type { ControllerContext, WorkloadController } from './context.js'
import { type PodMetrics, averageValueReplicas, milliValue, utilizationReplicas } from './hpa-replicas.js'
import { type Behavior, type ConditionChange, ScalingMemory } from './hpa-scaling.js'
import { type Condition, isConflict, keyOf, splitKey } from './object-keys.js'
import { WorkQueue } from './work-queue.js'

/** Upstream's --horizontal-pod-autoscaler-sync-period default. */
export const HPA_SYNC_PERIOD_MS = 15_000

const POD_METRICS: ResourceRef = { group: 'metrics.k8s.io', version: 'v1beta1', resource: 'pods', namespaced: true }

type Obj = Record<string, unknown>

interface MetricSpec {
  type?: string
  resource?: { name?: string; target?: { type?: string; averageUtilization?: number; averageValue?: string | number } }
  pods?: { metric?: { name?: string } }
  object?: { metric?: { name?: string } }
  external?: { metric?: { name?: string } }
  containerResource?: { name?: string; container?: string }
}

interface HpaSpec {
  scaleTargetRef?: { apiVersion?: string; kind?: string; name?: string }
  minReplicas?: number
  maxReplicas?: number
  metrics?: MetricSpec[]
  behavior?: Behavior
}

/** A failed metric: the condition it sets when all fail, and the error passed on. */
class MetricError extends Error {
  constructor(
    message: string,
    readonly condition: { reason: string; message: string },
  ) {
    super(message)
  }
}

export const horizontalPodAutoscalerController: WorkloadController = {
  name: 'horizontalpodautoscaling',
  serviceAccount: 'horizontal-pod-autoscaler',
  // Upstream runs it by default; here it needs a metrics API registered by hand, so it is asked for by name.
  onByDefault: false,
  async start(ctx) {
    const hpas = ctx.informers.informer({ group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' })
    const pods = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
    const memory = new ScalingMemory()
    const timers = new Map<string, ReturnType<typeof setTimeout>>()
    /** When each HPA was last synced, by the controller's clock: a clock moved by hand brings back only those due. */
    const syncedAt = new Map<string, number>()
    let stopped = false
    const resyncLater = (key: string): void => {
      clearTimeout(timers.get(key))
      if (stopped) return
      const timer = setTimeout(() => {
        timers.delete(key)
        queue.add(key)
      }, HPA_SYNC_PERIOD_MS)
      ;(timer as { unref?: () => void }).unref?.()
      timers.set(key, timer)
    }
    const queue: WorkQueue = new WorkQueue(
      async (key) => {
        const { namespace, name } = splitKey(key)
        const hpa = hpas.get(namespace, name)
        if (!hpa) {
          memory.forget(key)
          clearTimeout(timers.get(key))
          timers.delete(key)
          syncedAt.delete(key)
          return
        }
        syncedAt.set(key, ctx.now().getTime())
        try {
          await reconcile(ctx, hpa, key, pods, memory)
        } catch (err) {
          // A status written over a newer one: look again at once; anything else waits for the next period, as upstream's queue does.
          if (isConflict(err)) queue.add(key)
          else ctx.logger.warn({ controller: 'horizontalpodautoscaling', key, err: String(err) }, 'cannot sync the autoscaler')
        }
        resyncLater(key)
      },
      { logger: ctx.logger, name: 'horizontalpodautoscaling' },
    )
    await Promise.all([hpas.synced, pods.synced])
    const stopHpas = hpas.addHandlers({
      onAdd: (hpa) => queue.add(keyOf(hpa)),
      // Its own status writes do not bring an HPA back early: a new spec does.
      onUpdate: (before, hpa) => {
        if (before.metadata.generation !== hpa.metadata.generation) queue.add(keyOf(hpa))
      },
      onDelete: (hpa) => queue.add(keyOf(hpa)),
    })
    // A jump noticed after an HPA's sync at the new time (one created just after the clock moved) is no reason to sync it again.
    const due = (key: string): boolean => ctx.now().getTime() - (syncedAt.get(key) ?? -Infinity) >= HPA_SYNC_PERIOD_MS
    const stopJumps = onClockJump(ctx.now, () => hpas.list().map(keyOf).filter(due).forEach((key) => queue.add(key)))
    return () => {
      stopped = true
      stopHpas()
      stopJumps()
      for (const timer of timers.values()) clearTimeout(timer)
      timers.clear()
      queue.stop()
    }
  },
}

async function reconcile(ctx: ControllerContext, shared: KubeObject, key: string, podInformer: SharedInformer, memory: ScalingMemory): Promise<void> {
  const hpa: KubeObject = { ...structuredClone(shared), apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }
  const namespace = hpa.metadata.namespace ?? ''
  const spec = (hpa['spec'] as HpaSpec | undefined) ?? {}
  const before = (shared['status'] as Obj | undefined) ?? {}
  const status = structuredClone(before)
  const now = ctx.now()
  let conditions = structuredClone((status['conditions'] as Condition[] | undefined) ?? [])
  const setCondition = (type: string, value: Condition['status'], reason: string, message: string): void => {
    conditions = setConditionIn(conditions, type, value, reason, message, now)
  }
  const write = async (current: number, desired: number, metrics: Obj[] | undefined, rescaled: boolean): Promise<void> => {
    const next: Obj = {}
    if (typeof hpa.metadata.generation === 'number') next['observedGeneration'] = hpa.metadata.generation
    if (rescaled) next['lastScaleTime'] = formatTimestamp(now)
    else if (status['lastScaleTime'] !== undefined) next['lastScaleTime'] = status['lastScaleTime']
    if (current) next['currentReplicas'] = current
    next['desiredReplicas'] = desired
    if (metrics?.length) next['currentMetrics'] = metrics
    if (conditions.length) next['conditions'] = conditions
    if (JSON.stringify(next) === JSON.stringify(before)) return
    try {
      await ctx.client.updateStatus(hpaEntry, namespace, { ...hpa, status: next })
    } catch (err) {
      ctx.events.record(hpa, 'Warning', 'FailedUpdateStatus', (err as Error).message)
      throw err
    }
  }
  const oldDesired = typeof status['desiredReplicas'] === 'number' ? status['desiredReplicas'] : 0
  const oldCurrent = typeof status['currentReplicas'] === 'number' ? status['currentReplicas'] : 0

  // The target's scale.
  const ref = spec.scaleTargetRef ?? {}
  let target: ResourceRef
  let scale: KubeObject
  try {
    target = await scaleTargetResource(ctx, ref.apiVersion ?? '', ref.kind ?? '')
    scale = await ctx.client.getScale(target, namespace, ref.name ?? '')
  } catch (err) {
    const message = errorText(err)
    ctx.events.record(hpa, 'Warning', 'FailedGetScale', message)
    setCondition('AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${message}`)
    await write(oldCurrent, oldDesired, status['currentMetrics'] as Obj[] | undefined, false)
    return
  }
  setCondition('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale")
  const scaleSpec = (scale['spec'] as Obj | undefined) ?? {}
  const current = typeof scaleSpec['replicas'] === 'number' ? scaleSpec['replicas'] : 0
  memory.recordInitial(key, current, now.getTime())

  const minReplicas = spec.minReplicas ?? 1
  const maxReplicas = spec.maxReplicas ?? 0
  let desired = 0
  let reason = ''
  let rescale = true
  let metricStatuses: Obj[] | undefined
  if (current === 0 && minReplicas !== 0) {
    rescale = false
    setCondition('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero')
  } else if (current > maxReplicas) {
    reason = 'Current number of replicas above Spec.MaxReplicas'
    desired = maxReplicas
  } else if (current < minReplicas) {
    reason = 'Current number of replicas below Spec.MinReplicas'
    desired = minReplicas
  } else {
    const computed = await replicasForMetrics(ctx, hpa, scale, spec.metrics ?? [], podInformer, setCondition)
    metricStatuses = computed.statuses
    if (computed.replicas === -1) {
      await write(current, oldDesired, metricStatuses, false)
      ctx.events.record(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error ?? '')
      return
    }
    desired = computed.replicas
    if (desired > current) reason = `${computed.metric} above target`
    if (desired < current) reason = 'All metrics below target'
    const normalized = spec.behavior
      ? memory.normalizeWithBehavior(key, spec.behavior, current, desired, minReplicas, maxReplicas, now.getTime())
      : memory.normalize(key, current, desired, minReplicas, maxReplicas, now.getTime())
    for (const c of normalized.conditions as ConditionChange[]) setCondition(c.type, c.status, c.reason, c.message)
    desired = normalized.replicas
    rescale = desired !== current
  }

  if (rescale) {
    try {
      await ctx.client.updateScale(target, namespace, { ...scale, spec: { ...scaleSpec, replicas: desired } })
    } catch (err) {
      const message = errorText(err)
      ctx.events.record(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${message}`)
      setCondition('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${message}`)
      await write(current, oldDesired, metricStatuses, false)
      return
    }
    setCondition('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`)
    ctx.events.record(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`)
    memory.recordScale(key, spec.behavior, current, desired, now.getTime())
  } else desired = current
  await write(current, desired, metricStatuses, rescale)
}

/**
 * The replicas the metrics ask for (the highest of them), as upstream's
 * computeReplicasForMetrics: -1 when none could be computed, or when some
 * failed and the others would scale down.
 */
async function replicasForMetrics(
  ctx: ControllerContext,
  hpa: KubeObject,
  scale: KubeObject,
  specs: readonly MetricSpec[],
  podInformer: SharedInformer,
  setCondition: (type: string, value: Condition['status'], reason: string, message: string) => void,
): Promise<{ replicas: number; metric?: string; statuses?: Obj[]; error?: string }> {
  const selectorText = String(((scale['status'] as Obj | undefined) ?? {})['selector'] ?? '')
  if (!selectorText) {
    ctx.events.record(hpa, 'Warning', 'SelectorRequired', 'selector is required')
    setCondition('ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector")
    return { replicas: -1, error: 'selector is required' }
  }
  let selector: ReturnType<typeof parseLabelSelector>
  try {
    selector = parseLabelSelector(selectorText)
  } catch (err) {
    const message = `couldn't convert selector into a corresponding internal selector object: ${errorText(err)}`
    ctx.events.record(hpa, 'Warning', 'InvalidSelector', message)
    setCondition('ScalingActive', 'False', 'InvalidSelector', message)
    return { replicas: -1, error: message }
  }
  const namespace = hpa.metadata.namespace ?? ''
  const pods = podInformer.list(namespace).filter((pod) => selector.matches(pod.metadata.labels))
  const specReplicas = Number(((scale['spec'] as Obj | undefined) ?? {})['replicas'] ?? 0)
  const statuses: Obj[] = []
  let replicas = 0
  let metric = ''
  let invalid = 0
  let firstError: MetricError | undefined
  for (const spec of specs) {
    try {
      const proposal = await replicasForMetric(ctx, namespace, spec, specReplicas, selectorText, pods)
      statuses.push(proposal.status)
      if (replicas === 0 || proposal.replicas > replicas) {
        replicas = proposal.replicas
        metric = proposal.metric
      }
    } catch (err) {
      if (!(err instanceof MetricError)) throw err
      ctx.events.record(hpa, 'Warning', err.condition.reason, err.condition.message)
      statuses.push({ type: '' })
      invalid++
      firstError ??= err
    }
  }
  const error = firstError ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError.message}` : undefined
  if (firstError && (invalid >= specs.length || replicas < specReplicas)) {
    setCondition('ScalingActive', 'False', firstError.condition.reason, `the HPA was unable to compute the replica count: ${firstError.condition.message}`)
    return { replicas: -1, statuses, ...(error ? { error } : {}) }
  }
  setCondition('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metric}`)
  return { replicas, metric, statuses, ...(error ? { error } : {}) }
}

async function replicasForMetric(
  ctx: ControllerContext,
  namespace: string,
  spec: MetricSpec,
  current: number,
  selector: string,
  pods: readonly KubeObject[],
): Promise<{ replicas: number; metric: string; status: Obj }> {
  switch (spec.type) {
    case 'Resource': {
      const resource = spec.resource?.name ?? ''
      const target = spec.resource?.target ?? {}
      const fail = (err: unknown): MetricError => {
        const inner = errorText(err)
        return new MetricError(`failed to get ${resource} resource metric value: ${inner}`, { reason: 'FailedGetResourceMetric', message: inner })
      }
      if (target.averageValue !== undefined) {
        try {
          const sampled = await resourceMetrics(ctx, namespace, selector, resource)
          const proposal = averageValueReplicas(current, milliValue(target.averageValue), resource, pods, sampled, ctx.now().getTime())
          return { replicas: proposal.replicas, metric: `${resource} resource`, status: resourceStatus(resource, { averageValue: milliQuantity(proposal.rawAverage) }) }
        } catch (err) {
          throw fail(new Error(`failed to get ${resource} usage: ${errorText(err)}`))
        }
      }
      if (target.averageUtilization === undefined)
        throw fail(new Error('invalid resource metric source: neither an average utilization target nor an average value (usage) target was set'))
      try {
        const sampled = await resourceMetrics(ctx, namespace, selector, resource)
        const proposal = utilizationReplicas(current, target.averageUtilization, resource, pods, sampled, ctx.now().getTime())
        return {
          replicas: proposal.replicas,
          metric: `${resource} resource utilization (percentage of request)`,
          status: resourceStatus(resource, { averageUtilization: proposal.utilization, averageValue: milliQuantity(proposal.rawAverage) }),
        }
      } catch (err) {
        throw fail(new Error(`failed to get ${resource} utilization: ${errorText(err)}`))
      }
    }
    // The custom and external metrics APIs are not read here: these sources fail with upstream's reasons.
    case 'Pods':
      throw unsupported('FailedGetPodsMetric', `failed to get pods metric value: unable to get metric ${spec.pods?.metric?.name ?? ''}`)
    case 'Object':
      throw unsupported('FailedGetObjectMetric', `failed to get object metric value: unable to get metric ${spec.object?.metric?.name ?? ''}`)
    case 'External':
      throw unsupported('FailedGetExternalMetric', `failed to get ${spec.external?.metric?.name ?? ''} external metric value: unable to get external metric ${spec.external?.metric?.name ?? ''}`)
    case 'ContainerResource':
      throw unsupported('FailedGetContainerResourceMetric', `failed to get ${spec.containerResource?.container ?? ''} container metric value: unable to get metrics for resource ${spec.containerResource?.name ?? ''}`)
    default: {
      const message = `unknown metric source type "${spec.type ?? ''}"`
      throw new MetricError(message, { reason: 'InvalidMetricSourceType', message })
    }
  }
}

function unsupported(reason: string, prefix: string): MetricError {
  const message = `${prefix}: this metric source is not supported by this server's autoscaler`
  return new MetricError(message, { reason, message })
}

function resourceStatus(name: string, current: Obj): Obj {
  return { type: 'Resource', resource: { name, current } }
}

/** A milli-value as upstream's resource.NewMilliQuantity(v, DecimalSI) prints it. */
function milliQuantity(milli: number): string {
  return canonicalQuantity(`${milli}m`) ?? `${milli}m`
}

/**
 * Each pod's usage of `resource` from the resource metrics API (the
 * PodMetrics of the pods the selector picks, summed over their
 * containers); a pod whose containers do not all report it is left out.
 */
async function resourceMetrics(ctx: ControllerContext, namespace: string, selector: string, resource: string): Promise<PodMetrics> {
  let items: KubeObject[]
  try {
    items = (await ctx.client.list(POD_METRICS, namespace, { labelSelector: selector })).items
  } catch (err) {
    throw new Error(`unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${clientErrorText(err, 'get', 'pods.metrics.k8s.io')}`)
  }
  if (items.length === 0) throw new Error(`unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`)
  const metrics: PodMetrics = new Map()
  for (const item of items) {
    const containers = (item['containers'] as { usage?: Obj }[] | undefined) ?? []
    let sum = 0
    let complete = containers.length > 0
    for (const c of containers) {
      const usage = c.usage?.[resource]
      if (usage === undefined) {
        complete = false
        break
      }
      sum += milliValue(usage)
    }
    if (complete)
      metrics.set(item.metadata.name ?? '', { value: sum, timestamp: Date.parse(String(item['timestamp'] ?? '')) || 0, windowMs: goDurationMs(item['window']) })
  }
  return metrics
}

/** `30s`, `1m0s`, `500ms` as milliseconds (a PodMetrics window); 0 when unreadable. */
function goDurationMs(raw: unknown): number {
  if (typeof raw !== 'string') return 0
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 }
  let total = 0
  for (const [, n = '0', unit = ''] of raw.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(n) * (units[unit] ?? 0)
  return total
}

/**
 * Where the target's scale lives: the resource of `kind` in the group of
 * `apiVersion`, from discovery (upstream's REST mapper), so any kind with
 * a `scale` subresource, a custom resource's too, can be autoscaled.
 */
async function scaleTargetResource(ctx: ControllerContext, apiVersion: string, kind: string): Promise<ResourceRef> {
  const parts = apiVersion.split('/')
  if (parts.length > 2) throw new Error(`unexpected GroupVersion string: ${apiVersion}`)
  const [group, version] = parts.length === 2 ? [parts[0] ?? '', parts[1] ?? ''] : ['', parts[0] ?? '']
  const noMatch = new Error(`no matches for kind "${kind}" in group "${group}"`)
  let resources
  try {
    resources = (await ctx.client.resources(group, version)).resources
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) throw noMatch
    throw err
  }
  const found = resources.find((r) => r.kind === kind && !r.name.includes('/'))
  if (!found) throw noMatch
  return { group, version, resource: found.name, namespaced: true }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * An error as client-go words it: a reply that was not a Status (the bare
 * 404 of a group no server serves, the 503 of an unavailable aggregated
 * API) becomes its generic text naming the verb and the resource.
 */
function clientErrorText(err: unknown, verb: string, resource: string): string {
  if (err instanceof StatusError) {
    if (err.code === 404 && err.message === 'the server could not find the requested resource') return `the server could not find the requested resource (${verb} ${resource})`
    if (err.code === 503) return `the server is currently unable to handle the request (${verb} ${resource})`
  }
  return errorText(err)
}

/** Sets a condition in place, its transition time moved only when its status changes (upstream's setConditionInList). */
function setConditionIn(list: Condition[], type: string, status: Condition['status'], reason: string, message: string, now: Date): Condition[] {
  const out = list.slice()
  let index = out.findIndex((c) => c.type === type)
  if (index < 0) {
    out.push({ type, status: '' as Condition['status'] })
    index = out.length - 1
  }
  const existing = out[index]!
  const lastTransitionTime = existing.status !== status ? formatTimestamp(now) : existing.lastTransitionTime
  out[index] = { type, status, ...(lastTransitionTime ? { lastTransitionTime } : {}), reason, message }
  return out
}
