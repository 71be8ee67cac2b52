/**
 * From the count the metrics ask for to the count the autoscaler sets
 * (upstream's normalizeDesiredReplicas and its behavior variant):
 * - without `spec.behavior`: the highest recommendation of the last five
 *   minutes on the way down (the downscale stabilization window), at most
 *   double the current count (or 4) on the way up, within min and max;
 * - with `spec.behavior`: the stabilization windows of each direction and
 *   the Pods/Percent policies over their periods, counting the changes
 *   made within each period.
 * Each step answers the AbleToScale and ScalingLimited conditions upstream
 * sets for it. Times are the controller's clock in milliseconds.
 */

/** Upstream's --horizontal-pod-autoscaler-downscale-stabilization default. */
export const DOWNSCALE_STABILIZATION_MS = 300_000
const SCALE_UP_FACTOR = 2
const SCALE_UP_MINIMUM = 4

interface Recommendation {
  replicas: number
  at: number
}

interface ScaleEvent {
  change: number
  at: number
  outdated: boolean
}

export interface ScalingPolicy {
  type: 'Pods' | 'Percent'
  value: number
  periodSeconds: number
}

export interface ScalingRules {
  stabilizationWindowSeconds?: number
  selectPolicy?: 'Max' | 'Min' | 'Disabled'
  policies?: ScalingPolicy[]
}

export interface Behavior {
  scaleUp?: ScalingRules
  scaleDown?: ScalingRules
}

/** A condition the step decided: type, status, reason, message. */
export interface ConditionChange {
  type: 'AbleToScale' | 'ScalingLimited'
  status: 'True' | 'False'
  reason: string
  message: string
}

const SCALE_UP_DEFAULTS: Required<ScalingRules> = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
}
const SCALE_DOWN_DEFAULTS: Required<ScalingRules> = {
  stabilizationWindowSeconds: DOWNSCALE_STABILIZATION_MS / 1000,
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
}

function rulesWithDefaults(given: ScalingRules | undefined, defaults: Required<ScalingRules>): Required<ScalingRules> {
  return {
    stabilizationWindowSeconds: given?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
    selectPolicy: given?.selectPolicy ?? defaults.selectPolicy,
    policies: given?.policies ?? defaults.policies,
  }
}

/** What the autoscaler remembers of each HPA between syncs (upstream keeps the same in memory, lost on restart). */
export class ScalingMemory {
  private readonly recommendations = new Map<string, Recommendation[]>()
  private readonly scaleUps = new Map<string, ScaleEvent[]>()
  private readonly scaleDowns = new Map<string, ScaleEvent[]>()

  forget(key: string): void {
    this.recommendations.delete(key)
    this.scaleUps.delete(key)
    this.scaleDowns.delete(key)
  }

  /** The current count stands as the first recommendation, so a first sync never scales down at once. */
  recordInitial(key: string, current: number, now: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: current, at: now }])
  }

  /** Without behavior: stabilize the way down, limit the way up, clamp to min and max. */
  normalize(key: string, current: number, desired: number, min: number, max: number, now: number): { replicas: number; conditions: ConditionChange[] } {
    const stabilized = this.stabilizeDown(key, desired, now)
    const conditions: ConditionChange[] = [
      stabilized !== desired
        ? { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
        : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
    ]
    const limit = Math.max(SCALE_UP_FACTOR * current, SCALE_UP_MINIMUM)
    const [ceiling, reason, message] =
      max > limit
        ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
        : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count']
    let replicas = stabilized
    let limited: ConditionChange = { type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' }
    if (stabilized < min) {
      replicas = min
      limited = { type: 'ScalingLimited', status: 'True', reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' }
    } else if (stabilized > ceiling) {
      replicas = ceiling
      limited = { type: 'ScalingLimited', status: 'True', reason, message }
    }
    conditions.push(limited)
    return { replicas, conditions }
  }

  /** With behavior: each direction's window, then its policies' rate, then min and max. */
  normalizeWithBehavior(key: string, behavior: Behavior, current: number, desired: number, min: number, max: number, now: number): { replicas: number; conditions: ConditionChange[] } {
    const up = rulesWithDefaults(behavior.scaleUp, SCALE_UP_DEFAULTS)
    const down = rulesWithDefaults(behavior.scaleDown, SCALE_DOWN_DEFAULTS)
    const { replicas: stabilized, reason: stabilizedReason, message: stabilizedMessage } = this.stabilizeBoth(key, up, down, current, desired, now)
    const conditions: ConditionChange[] = [
      stabilized !== desired
        ? { type: 'AbleToScale', status: 'True', reason: stabilizedReason, message: stabilizedMessage }
        : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
    ]
    const { replicas, reason, message } = this.limitRate(key, up, down, current, stabilized, min, max, now)
    conditions.push({ type: 'ScalingLimited', status: replicas === stabilized ? 'False' : 'True', reason, message })
    return { replicas, conditions }
  }

  /** Remembers a change made, for the policies' periods (only with behavior, as upstream). */
  recordScale(key: string, behavior: Behavior | undefined, from: number, to: number, now: number): void {
    if (!behavior) return
    const upward = to > from
    const rules = upward ? rulesWithDefaults(behavior.scaleUp, SCALE_UP_DEFAULTS) : rulesWithDefaults(behavior.scaleDown, SCALE_DOWN_DEFAULTS)
    const store = upward ? this.scaleUps : this.scaleDowns
    const longest = Math.max(0, ...rules.policies.map((p) => p.periodSeconds)) * 1000
    const events = store.get(key) ?? []
    for (const e of events) if (e.at < now - longest) e.outdated = true
    const event: ScaleEvent = { change: Math.abs(to - from), at: now, outdated: false }
    const reusable = events.findLastIndex((e) => e.outdated)
    if (reusable >= 0) events[reusable] = event
    else events.push(event)
    store.set(key, events)
  }

  private stabilizeDown(key: string, desired: number, now: number): number {
    const cutoff = now - DOWNSCALE_STABILIZATION_MS
    const list = this.recommendations.get(key) ?? []
    let highest = desired
    let old = -1
    list.forEach((rec, i) => {
      if (rec.at < cutoff) old = i
      else if (rec.replicas > highest) highest = rec.replicas
    })
    const fresh = { replicas: desired, at: now }
    if (old >= 0) list[old] = fresh
    else list.push(fresh)
    this.recommendations.set(key, list)
    return highest
  }

  private stabilizeBoth(key: string, up: Required<ScalingRules>, down: Required<ScalingRules>, current: number, desired: number, now: number): { replicas: number; reason: string; message: string } {
    const upCutoff = now - up.stabilizationWindowSeconds * 1000
    const downCutoff = now - down.stabilizationWindowSeconds * 1000
    const list = this.recommendations.get(key) ?? []
    let upBound = desired
    let downBound = desired
    let old = -1
    list.forEach((rec, i) => {
      if (rec.at > upCutoff) upBound = Math.min(upBound, rec.replicas)
      if (rec.at > downCutoff) downBound = Math.max(downBound, rec.replicas)
      if (rec.at < upCutoff && rec.at < downCutoff) old = i
    })
    let replicas = current
    if (replicas < upBound) replicas = upBound
    if (replicas > downBound) replicas = downBound
    const fresh = { replicas: desired, at: now }
    if (old >= 0) list[old] = fresh
    else list.push(fresh)
    this.recommendations.set(key, list)
    return desired >= current
      ? { replicas, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { replicas, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
  }

  private changedWithin(store: Map<string, ScaleEvent[]>, key: string, periodSeconds: number, now: number): number {
    const cutoff = now - periodSeconds * 1000
    return (store.get(key) ?? []).filter((e) => e.at > cutoff).reduce((sum, e) => sum + e.change, 0)
  }

  private limitRate(
    key: string,
    up: Required<ScalingRules>,
    down: Required<ScalingRules>,
    current: number,
    desired: number,
    min: number,
    max: number,
    now: number,
  ): { replicas: number; reason: string; message: string } {
    const periodStart = (p: ScalingPolicy): number => current - this.changedWithin(this.scaleUps, key, p.periodSeconds, now) + this.changedWithin(this.scaleDowns, key, p.periodSeconds, now)
    if (desired > current) {
      let limit: number
      if (up.selectPolicy === 'Disabled') limit = current
      else {
        const proposals = up.policies.map((p) => (p.type === 'Pods' ? periodStart(p) + p.value : Math.ceil(periodStart(p) * (1 + p.value / 100))))
        limit = up.selectPolicy === 'Min' ? Math.min(...proposals) : Math.max(...proposals)
      }
      limit = Math.max(limit, current)
      const [ceiling, reason, message] =
        max > limit
          ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
          : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count']
      if (desired > ceiling) return { replicas: ceiling, reason, message }
    } else if (desired < current) {
      let limit: number
      if (down.selectPolicy === 'Disabled') limit = current
      else {
        const proposals = down.policies.map((p) => (p.type === 'Pods' ? periodStart(p) - p.value : Math.trunc(periodStart(p) * (1 - p.value / 100))))
        limit = down.selectPolicy === 'Min' ? Math.max(...proposals) : Math.min(...proposals)
      }
      limit = Math.min(limit, current)
      const [floor, reason, message] =
        min < limit
          ? [limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate']
          : [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count']
      if (desired < floor) return { replicas: floor, reason, message }
    }
    return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' }
  }
}
