/**
 * The READY, STATUS and RESTARTS cells of a pod, with upstream's reasoning:
 * init containers first (`Init:1/2`, `Init:CrashLoopBackOff`), then the main
 * containers from last to first, sidecars (restartable init containers)
 * counted as containers, and `Terminating` once the pod is being deleted.
 */
import { humanDuration } from '../../machinery/human-duration.js'
import type { KubeObject } from '../../machinery/object.js'
import { at, int, list, text } from './values.js'

export interface PodSummary {
  ready: string
  status: string
  restarts: string
}

const NODE_LOST_REASON = 'NodeLost'

function isRestartable(container: unknown): boolean {
  return text(at(container, 'restartPolicy')) === 'Always'
}

function conditionTrue(pod: KubeObject, type: string): boolean {
  return list(at(pod, 'status', 'conditions')).some(
    (c) => text(at(c, 'type')) === type && text(at(c, 'status')) === 'True',
  )
}

/** The later of two RFC 3339 times ('' counts as never). */
function later(a: string, b: string): string {
  if (!a) return b
  if (!b) return a
  return Date.parse(b) > Date.parse(a) ? b : a
}

function lastTermination(status: unknown): string {
  return text(at(status, 'lastState', 'terminated', 'finishedAt'))
}

/** Why a terminated container stopped: its reason, else its signal or exit code. */
function terminatedReason(terminated: unknown, prefix: string): string {
  const reason = text(at(terminated, 'reason'))
  if (reason) return `${prefix}${reason}`
  const signal = int(at(terminated, 'signal'))
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${int(at(terminated, 'exitCode'))}`
}

export function podSummary(pod: KubeObject, now: Date): PodSummary {
  const spec = at(pod, 'spec')
  const phase = text(at(pod, 'status', 'phase'))
  let reason = text(at(pod, 'status', 'reason')) || phase
  for (const c of list(at(pod, 'status', 'conditions'))) {
    if (text(at(c, 'type')) === 'PodScheduled' && text(at(c, 'reason')) === 'SchedulingGated') reason = 'SchedulingGated'
  }

  const initContainers = list(at(spec, 'initContainers'))
  const restartableByName = new Map(initContainers.map((c) => [text(at(c, 'name')), isRestartable(c)]))
  const total = list(at(spec, 'containers')).length + initContainers.filter(isRestartable).length
  let ready = 0
  let restarts = 0
  let sidecarRestarts = 0
  let lastRestart = ''
  let lastSidecarRestart = ''

  let initializing = false
  const initStatuses = list(at(pod, 'status', 'initContainerStatuses'))
  for (const [i, cs] of initStatuses.entries()) {
    restarts += int(at(cs, 'restartCount'))
    lastRestart = later(lastRestart, lastTermination(cs))
    const restartable = restartableByName.get(text(at(cs, 'name'))) ?? false
    if (restartable) {
      sidecarRestarts += int(at(cs, 'restartCount'))
      lastSidecarRestart = later(lastSidecarRestart, lastTermination(cs))
    }
    const terminated = at(cs, 'state', 'terminated')
    const waitingReason = text(at(cs, 'state', 'waiting', 'reason'))
    if (terminated !== undefined && int(at(terminated, 'exitCode')) === 0) continue
    if (restartable && at(cs, 'started') === true) {
      if (at(cs, 'ready') === true) ready++
      continue
    }
    if (terminated !== undefined) reason = terminatedReason(terminated, 'Init:')
    else if (waitingReason && waitingReason !== 'PodInitializing') reason = `Init:${waitingReason}`
    else reason = `Init:${i}/${initContainers.length}`
    initializing = true
    break
  }

  if (!initializing || conditionTrue(pod, 'Initialized')) {
    restarts = sidecarRestarts
    lastRestart = lastSidecarRestart
    let hasRunning = false
    const statuses = list(at(pod, 'status', 'containerStatuses'))
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]
      restarts += int(at(cs, 'restartCount'))
      lastRestart = later(lastRestart, lastTermination(cs))
      const waitingReason = text(at(cs, 'state', 'waiting', 'reason'))
      const terminated = at(cs, 'state', 'terminated')
      if (waitingReason) reason = waitingReason
      else if (terminated !== undefined) reason = terminatedReason(terminated, '')
      else if (at(cs, 'ready') === true && at(cs, 'state', 'running') !== undefined) {
        hasRunning = true
        ready++
      }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady'
  }

  if (pod.metadata.deletionTimestamp) {
    if (text(at(pod, 'status', 'reason')) === NODE_LOST_REASON) reason = 'Unknown'
    else if (phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating'
  }

  let restartsText = String(restarts)
  if (restarts !== 0 && lastRestart) restartsText = `${restarts} (${humanDuration(now.getTime() - Date.parse(lastRestart))} ago)`
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText }
}

/** READINESS GATES: how many of the pod's gates report True, `<none>` without gates. */
export function readinessGates(pod: KubeObject): string {
  const gates = list(at(pod, 'spec', 'readinessGates'))
  if (gates.length === 0) return '<none>'
  const conditions = list(at(pod, 'status', 'conditions'))
  let satisfied = 0
  for (const gate of gates) {
    const type = text(at(gate, 'conditionType'))
    const condition = conditions.find((c) => text(at(c, 'type')) === type)
    if (condition !== undefined && text(at(condition, 'status')) === 'True') satisfied++
  }
  return `${satisfied}/${gates.length}`
}
