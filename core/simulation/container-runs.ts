/**
 * A simulated pod's containers that run and exit, as the kubelet runs them.
 *
 * Init containers run in order, each to its exit before the next starts, the
 * app containers waiting (`PodInitializing`) until every one succeeded. A
 * container runs as its command says (container-command.ts; any other
 * command for the node's default run time) and exits with its code. One that
 * fails fails the pod under restartPolicy Never; otherwise it is started
 * again, the first time at once and then after the kubelet's back-off (10 s,
 * doubling, at most 5 minutes), waiting meanwhile in `CrashLoopBackOff` with
 * its last termination kept and its restartCount counting the restarts. An
 * init container with restartPolicy Always (a sidecar) starts, stays running
 * and ready, and the next one starts after it.
 *
 * Under restartPolicy Always, an app container whose command ends is started
 * again each time it does, after the same back-off (stepRestartingContainers).
 *
 * Each step is worked out from the statuses the pod holds and the clock, so
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

/** Whole seconds as Go prints a duration: `10s`, `1m20s`, `5m0s`. */
const goSeconds = (seconds: number): string => (seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`)

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
  /** The init containers that went into their back-off in this step (the kubelet's BackOff event). */
  backedOff: Obj[]
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

/** How one container runs: what it does (its command), and when it is started again after it exits. */
interface RunRules {
  runMs: number
  exitCode: number
  /** Whether an exit with this code is followed by a restart. */
  restarts(exitCode: number): boolean
  /** Whether the container is ready while it runs (app containers and sidecars; not an init container). */
  readyWhileRunning: boolean
  /** Its containerID before the restart count: one per run. */
  idPrefix: string
}

/** One run of `container` starting now: the run before it (if any) becomes its last termination. */
function started(container: Obj, before: Obj | undefined, rules: RunRules, clock: Clock): Obj {
  const previous = obj(before?.['state'])['terminated'] ?? obj(before?.['lastState'])['terminated']
  const restartCount = before ? Number(before['restartCount'] ?? 0) + (previous ? 1 : 0) : 0
  return {
    name: container['name'],
    image: container['image'],
    imageID: `simulated://${String(container['image'])}`,
    containerID: `${rules.idPrefix}-${restartCount}`,
    ready: rules.readyWhileRunning,
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

/** Where a container got to; `backedOff`: it went into its back-off in this step. */
type Progress = { status: Obj; result: 'succeeded' | 'running' | 'failed'; wakeInMs?: number; starts: number; backedOff?: boolean }

/** Moves one container on as far as the clock allows: started, run, exited, restarted after its back-off. */
function advance(container: Obj, before: Obj | undefined, rules: RunRules, pod: KubeObject, clock: Clock): Progress {
  let status = before
  let starts = 0
  // Each pass makes one transition; a container that exits at once and is restarted at once takes a few.
  for (let pass = 0; pass < 8; pass++) {
    const state = obj(status?.['state'])
    const running = obj(state['running'])
    const finished = obj(state['terminated'])
    if (!status || (state['waiting'] && !status['lastState'])) {
      status = started(container, undefined, rules, clock)
      starts++
    } else if (state['running']) {
      const endsAt = Date.parse(String(running['startedAt'])) + rules.runMs
      if (endsAt > clock.nowMs) return { status, result: 'running', wakeInMs: endsAt - clock.nowMs, starts }
      status = terminated(status, rules.exitCode, clock)
    } else if (state['terminated'] && !rules.restarts(Number(finished['exitCode']))) {
      return { status, result: finished['exitCode'] === 0 ? 'succeeded' : 'failed', starts }
    } else {
      // Exited to be restarted, or waiting in its back-off: restarted once the back-off from its last exit is over.
      const last = state['terminated'] ? finished : obj(obj(status['lastState'])['terminated'])
      const backOffMs = restartBackOffMs(Number(status['restartCount'] ?? 0))
      const restartAt = Date.parse(String(last['finishedAt'])) + backOffMs
      if (restartAt > clock.nowMs) {
        const message = `back-off ${goSeconds(backOffMs / 1000)} restarting failed container=${String(container['name'])} pod=${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`
        const backingOff = { ...waiting(container, 'CrashLoopBackOff', status, message), lastState: { terminated: last } }
        if (!state['terminated']) return { status, result: 'running', wakeInMs: restartAt - clock.nowMs, starts }
        const inBackOff = { ...backingOff, imageID: status['imageID'], containerID: status['containerID'] }
        return { status: inBackOff, result: 'running', wakeInMs: restartAt - clock.nowMs, starts, backedOff: true }
      }
      status = started(container, status, rules, clock)
      starts++
    }
  }
  return { status: status!, result: 'running', wakeInMs: 0, starts }
}

/** An init container's rules: run as its command says, restarted after a failure unless the pod never restarts. */
function initRules(container: Obj, index: number, pod: KubeObject, defaultRunMs: number): RunRules {
  const program = containerProcess(container)
  const neverRestarts = obj(pod['spec'])['restartPolicy'] === 'Never'
  return {
    runMs: (program?.runSeconds ?? defaultRunMs / 1000) * 1000,
    exitCode: program?.exitCode ?? 0,
    // A sidecar is started again whatever it exits with, as an app container under restartPolicy Always.
    restarts: (code) => container['restartPolicy'] === 'Always' || (code !== 0 && !neverRestarts),
    readyWhileRunning: container['restartPolicy'] === 'Always',
    idPrefix: `simulated://${pod.metadata.uid ?? ''}-init-${index}`,
  }
}

/** The next step of `pod`'s init containers at `clock`; `defaultRunMs` for a command the simulation does not read. */
export function stepInitContainers(pod: KubeObject, defaultRunMs: number, clock: Clock): InitContainersStep {
  const spec = obj(pod['spec'])
  const held = list(obj(pod['status'])['initContainerStatuses'])
  const before = new Map(held.map((s) => [String(s['name']), s]))
  const statuses: Obj[] = []
  const startedNow: Obj[] = []
  const backedOff: Obj[] = []
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
    // A sidecar that runs is where it should be: the next init container goes on.
    if (container['restartPolicy'] === 'Always' && prior && obj(prior['state'])['running']) return void statuses.push(prior)
    const progress = advance(container, prior, initRules(container, index, pod, defaultRunMs), pod, clock)
    const sidecarUp = container['restartPolicy'] === 'Always' && progress.result === 'running' && obj(progress.status['state'])['running'] !== undefined
    statuses.push(progress.status)
    if (progress.starts > 0) startedNow.push(container)
    if (progress.backedOff) backedOff.push(container)
    if (progress.result === 'succeeded' || sidecarUp) return
    incomplete.push(name)
    outcome = progress.result
    wakeInMs = progress.wakeInMs
  })
  const changed = JSON.stringify(statuses) !== JSON.stringify(held)
  return { outcome, statuses, changed, started: startedNow, backedOff, incomplete, ...(wakeInMs !== undefined ? { wakeInMs } : {}) }
}

export interface RestartingContainersStep {
  /** The app containers' statuses, in their order. */
  statuses: Obj[]
  changed: boolean
  /** The containers started again in this step (their events). */
  started: Obj[]
  /** The containers that went into their back-off in this step. */
  backedOff: Obj[]
  /** The containers not running (exited, or waiting in their back-off), for the Ready condition's message. */
  unready: string[]
  /** When to look again, ms from now; undefined when no container will exit by itself. */
  wakeInMs?: number
}

/**
 * The next step of a running pod's app containers under restartPolicy Always: a container whose command the
 * simulation reads as one that ends (`sleep 5`, `exit 1`, `true`) is started again each time it exits, after the
 * back-off, and is not ready meanwhile (`CrashLoopBackOff`), as the kubelet restarts it. Containers whose command
 * does not end, or is not read, keep running. Undefined when no container of the pod ends.
 */
export function stepRestartingContainers(pod: KubeObject, clock: Clock): RestartingContainersStep | undefined {
  const containers = list(obj(pod['spec'])['containers'])
  const ends = (c: Obj): boolean => {
    const program = containerProcess(c)
    return program !== undefined && (program.runSeconds ?? 0) !== Infinity
  }
  if (!containers.some(ends)) return undefined
  const held = list(obj(pod['status'])['containerStatuses'])
  const before = new Map(held.map((s) => [String(s['name']), s]))
  // Every container has a status once the pod runs; without one there is nothing to move on.
  if (containers.some((c) => !before.has(String(c['name'])))) return undefined
  const statuses: Obj[] = []
  const startedNow: Obj[] = []
  const backedOff: Obj[] = []
  const unready: string[] = []
  let wakeInMs: number | undefined
  containers.forEach((container, index) => {
    const prior = before.get(String(container['name']))!
    if (!ends(container)) return void statuses.push(prior)
    const program = containerProcess(container)!
    const rules: RunRules = {
      runMs: (program.runSeconds ?? 0) * 1000,
      exitCode: program.exitCode ?? 0,
      restarts: () => true,
      readyWhileRunning: true,
      idPrefix: `simulated://${pod.metadata.uid ?? ''}-${index}`,
    }
    const progress = advance(container, prior, rules, pod, clock)
    statuses.push(progress.status)
    if (progress.starts > 0) startedNow.push(container)
    if (progress.backedOff) backedOff.push(container)
    if (!obj(progress.status['state'])['running']) unready.push(String(container['name']))
    if (progress.wakeInMs !== undefined) wakeInMs = Math.min(wakeInMs ?? Infinity, progress.wakeInMs)
  })
  const changed = JSON.stringify(statuses) !== JSON.stringify(held)
  return { statuses, changed, started: startedNow, backedOff, unready, ...(wakeInMs !== undefined ? { wakeInMs } : {}) }
}
