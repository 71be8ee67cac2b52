/**
 * A simulated pod's init containers, run as the kubelet runs them: in
 * order, each to its exit before the next starts, the app containers
 * waiting (`PodInitializing`) until every one succeeded. A container runs
 * as its command says (container-command.ts; any other command for the
 * node's default run time) and exits with its code. One that fails fails
 * the pod under restartPolicy Never; otherwise it is started again, the
 * first time at once and then after the kubelet's back-off (10 s, doubling,
 * at most 5 minutes), waiting meanwhile in `CrashLoopBackOff` with its last
 * termination kept and its restartCount counting the restarts. An init
 * container with restartPolicy Always (a sidecar) starts, stays running and
 * ready, and the next one starts after it.
 *
 * The step is worked out from the statuses the pod holds and the clock, so
 * the kubelet needs no memory of its own between steps: it writes what a
 * step returns and looks again when it says.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { containerProcess } from './container-command.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

/** The kubelet's container restart back-off: 10 s, doubled each restart, at most 5 minutes. */
const BACK_OFF_START_MS = 10_000
const BACK_OFF_MAX_MS = 300_000

/** How long a container that failed waits before its restart number `restartCount + 1`: at once the first time. */
export function restartBackOffMs(restartCount: number): number {
  return restartCount === 0 ? 0 : Math.min(BACK_OFF_START_MS * 2 ** (restartCount - 1), BACK_OFF_MAX_MS)
}

export interface InitContainersStep {
  /** `done`: every init container succeeded (sidecars running); `running`: one runs or waits to restart; `failed`: one failed under restartPolicy Never. */
  outcome: 'done' | 'running' | 'failed'
  /** The init containers' statuses, in their order. */
  statuses: Obj[]
  /** Whether they differ from the statuses the pod holds. */
  changed: boolean
  /** The init containers started in this step (their events). */
  started: Obj[]
  /** When to look again, ms from now (`running`). */
  wakeInMs?: number
  /** The init containers that have not succeeded, for the Initialized condition's message. */
  incomplete: string[]
}

interface Clock {
  nowMs: number
  /** `nowMs` as the timestamps are written. */
  at: string
}

/** One run of `container` starting now: the run before it (if any) becomes its last termination. */
function started(container: Obj, before: Obj | undefined, index: number, pod: KubeObject, clock: Clock): Obj {
  const previous = obj(before?.['state'])['terminated'] ?? obj(before?.['lastState'])['terminated']
  const restartCount = before ? Number(before['restartCount'] ?? 0) + (previous ? 1 : 0) : 0
  const sidecar = container['restartPolicy'] === 'Always'
  return {
    name: container['name'],
    image: container['image'],
    imageID: `simulated://${String(container['image'])}`,
    containerID: `simulated://${pod.metadata.uid ?? ''}-init-${index}-${restartCount}`,
    ready: sidecar,
    started: true,
    restartCount,
    state: { running: { startedAt: clock.at } },
    ...(previous ? { lastState: { terminated: previous } } : {}),
  }
}

function terminated(status: Obj, exitCode: number, clock: Clock): Obj {
  const startedAt = obj(obj(status['state'])['running'])['startedAt'] ?? clock.at
  return {
    ...status,
    ready: exitCode === 0,
    started: false,
    state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: clock.at, containerID: status['containerID'] } },
  }
}

function waiting(container: Obj, reason: string, before: Obj | undefined, message?: string): Obj {
  return {
    name: container['name'],
    image: container['image'],
    imageID: '',
    ready: false,
    started: false,
    restartCount: Number(before?.['restartCount'] ?? 0),
    state: { waiting: { reason, ...(message ? { message } : {}) } },
    ...(before?.['lastState'] ? { lastState: before['lastState'] } : {}),
  }
}

type Progress = { status: Obj; result: 'succeeded' | 'running' | 'failed'; wakeInMs?: number; starts: number }

/** Moves one init container on as far as the clock allows. */
function advance(container: Obj, before: Obj | undefined, index: number, pod: KubeObject, defaultRunMs: number, clock: Clock): Progress {
  const process = containerProcess(container)
  const runMs = (process?.runSeconds ?? defaultRunMs / 1000) * 1000
  const exitCode = process?.exitCode ?? 0
  const neverRestarts = obj(pod['spec'])['restartPolicy'] === 'Never'
  const sidecar = container['restartPolicy'] === 'Always'
  let status = before
  let starts = 0
  // Each pass makes one transition; a container that exits at once and is restarted at once takes a few.
  for (let pass = 0; pass < 8; pass++) {
    const state = obj(status?.['state'])
    const running = obj(state['running'])
    const finished = obj(state['terminated'])
    if (!status || (state['waiting'] && !status['lastState'])) {
      status = started(container, undefined, index, pod, clock)
      starts++
    } else if (sidecar && state['running']) {
      return { status, result: 'succeeded', starts }
    } else if (state['running']) {
      const endsAt = Date.parse(String(running['startedAt'])) + runMs
      if (endsAt > clock.nowMs) return { status, result: 'running', wakeInMs: endsAt - clock.nowMs, starts }
      status = terminated(status, exitCode, clock)
    } else if (state['terminated'] && finished['exitCode'] === 0) {
      return { status, result: 'succeeded', starts }
    } else if (state['terminated'] && neverRestarts) {
      return { status, result: 'failed', starts }
    } else {
      // Failed, or waiting in its back-off: restarted once the back-off from its last exit is over.
      const last = state['terminated'] ? finished : obj(obj(status['lastState'])['terminated'])
      const backOffMs = restartBackOffMs(Number(status['restartCount'] ?? 0))
      const restartAt = Date.parse(String(last['finishedAt'])) + backOffMs
      if (restartAt > clock.nowMs) {
        const message = `back-off ${backOffMs / 1000}s restarting failed container=${String(container['name'])} pod=${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`
        const backingOff = { ...waiting(container, 'CrashLoopBackOff', status, message), lastState: { terminated: last } }
        return { status: state['terminated'] ? { ...backingOff, imageID: status['imageID'], containerID: status['containerID'] } : status, result: 'running', wakeInMs: restartAt - clock.nowMs, starts }
      }
      status = started(container, status, index, pod, clock)
      starts++
    }
  }
  return { status: status!, result: 'running', wakeInMs: 0, starts }
}

/** The next step of `pod`'s init containers at `clock`; `defaultRunMs` for a command the simulation does not read. */
export function stepInitContainers(pod: KubeObject, defaultRunMs: number, clock: Clock): InitContainersStep {
  const spec = obj(pod['spec'])
  const held = list(obj(pod['status'])['initContainerStatuses'])
  const before = new Map(held.map((s) => [String(s['name']), s]))
  const statuses: Obj[] = []
  const startedNow: Obj[] = []
  const incomplete: string[] = []
  let outcome: InitContainersStep['outcome'] = 'done'
  let wakeInMs: number | undefined
  list(spec['initContainers']).forEach((container, index) => {
    const name = String(container['name'])
    const prior = before.get(name)
    if (outcome !== 'done') {
      // After one that has not finished, every init container waits, as it stood.
      statuses.push(prior && obj(prior['state'])['waiting'] ? prior : waiting(container, 'PodInitializing', prior))
      incomplete.push(name)
      return
    }
    const progress = advance(container, prior, index, pod, defaultRunMs, clock)
    statuses.push(progress.status)
    if (progress.starts > 0) startedNow.push(container)
    if (progress.result === 'succeeded') return
    incomplete.push(name)
    outcome = progress.result
    wakeInMs = progress.wakeInMs
  })
  const changed = JSON.stringify(statuses) !== JSON.stringify(held)
  return { outcome, statuses, changed, started: startedNow, incomplete, ...(wakeInMs !== undefined ? { wakeInMs } : {}) }
}
