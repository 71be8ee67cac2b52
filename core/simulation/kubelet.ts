/**
 * The kubelet of the simulated nodes: a pod bound to one of them runs its
 * init containers (container-runs.ts) and is then started (Running, its
 * containers ready, a pod IP from the node's range),
 * a pod whose containers are expected to exit (restartPolicy Never or
 * OnFailure, as a Job's) then Succeeds, and a pod whose deletion began is
 * removed once its containers "stopped", as the kubelet confirms a
 * deletion. A container whose command is one the simulation understands
 * (container-command.ts: `sleep 30`, `sh -c "exit 1"`) runs that long or
 * exits with that code; a pod annotated `simulation.kube-apiserver-ts/exit-code`
 * with a code other than 0 Fails with it (its app containers exit with it). A pod whose host port a running
 * pod of its node holds is refused (Failed, reason NodePorts), as the
 * kubelet's admission refuses it. The kubelet's events are recorded as it
 * starts containers (Pulled, Created, Started) and stops them (Killing).
 * Every write is the node's own.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import { clientEventRecorder, type EventRecorder } from '../controllers/workloads/events.js'
import { WorkQueue } from '../controllers/workloads/work-queue.js'
import type { Logger } from '../logging/logger.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../machinery/object.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { pods as podEntry } from '../resources/core/pods.js'
import { containerProcess } from './container-command.js'
import { hostPortTaken } from './host-ports.js'
import { type InitContainersStep, stepInitContainers, stepRestartingContainers } from './container-runs.js'
import { nodeAddress, nodeClient, nodeNames, type SimulatedNodesOptions } from './nodes.js'

/** The annotation a test sets on a pod to have its containers exit with that code. */
export const EXIT_CODE_ANNOTATION = 'simulation.kube-apiserver-ts/exit-code'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {})
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])

export interface KubeletContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly options: SimulatedNodesOptions
  /** Whether each node writes as itself (the Node authorizer is on). */
  readonly asItself: boolean
  readonly now: () => Date
  readonly logger: Logger
}

function exits(pod: KubeObject): boolean {
  const policy = obj(pod['spec'])['restartPolicy'] ?? 'Always'
  return policy === 'Never' || policy === 'OnFailure' || pod.metadata.annotations?.[EXIT_CODE_ANNOTATION] !== undefined
}

/**
 * How long a pod that exits runs, in ms: the node's default, or longer where
 * a container's command says so (`sleep 30`); Infinity where one never ends.
 */
function runMsOf(pod: KubeObject, defaultMs: number): number {
  const seconds = list(obj(pod['spec'])['containers']).map((c) => containerProcess(c)?.runSeconds ?? 0)
  return Math.max(defaultMs, ...seconds.map((s) => s * 1000))
}

/** Each container's exit code: the test's annotation for all, else what its command exits with (0 unless it says). */
function exitCodesOf(pod: KubeObject): number[] {
  const forced = pod.metadata.annotations?.[EXIT_CODE_ANNOTATION]
  return list(obj(pod['spec'])['containers']).map((c) => (forced !== undefined ? Number(forced) || 0 : (containerProcess(c)?.exitCode ?? 0)))
}

/** The kubelet's words for a pod it stopped at its activeDeadlineSeconds. */
const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline'

/** When a started pod's spec.activeDeadlineSeconds runs out (ms), counted from its startTime; undefined without either. */
function activeDeadlineOf(pod: KubeObject): number | undefined {
  const seconds = obj(pod['spec'])['activeDeadlineSeconds']
  const startTime = obj(pod['status'])['startTime']
  if (typeof seconds !== 'number' || typeof startTime !== 'string') return undefined
  return Date.parse(startTime) + seconds * 1000
}

/** A timer cannot wait longer than this (about 24.8 days): a pod to run longer runs until it is deleted. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

function containerStatuses(pod: KubeObject, state: Obj | ((index: number) => Obj), ready: boolean): Obj[] {
  return list(obj(pod['spec'])['containers']).map((c, i) => ({
    name: c['name'],
    image: c['image'],
    imageID: `simulated://${String(c['image'])}`,
    containerID: `simulated://${pod.metadata.uid ?? ''}-${i}`,
    ready,
    started: ready,
    restartCount: 0,
    state: typeof state === 'function' ? state(i) : state,
  }))
}

/** The pod as an event's subject: informers' objects carry no kind. */
const aboutPod = (pod: KubeObject): KubeObject => ({ ...pod, apiVersion: 'v1', kind: 'Pod' })

/** The fieldPath of a container's events, as the kubelet's container references name it. */
const containerField = (container: Obj): string => `spec.containers{${String(container['name'])}}`
const initContainerField = (container: Obj): string => `spec.initContainers{${String(container['name'])}}`

/**
 * The events a kubelet records as it starts a container: the image (pulled again under imagePullPolicy Always;
 * present on the node otherwise), then created and started, with upstream's reasons and texts.
 */
function recordContainerStart(events: EventRecorder, pod: KubeObject, container: Obj, field: string): void {
  const about = aboutPod(pod)
  const image = JSON.stringify(String(container['image'] ?? ''))
  if (container['imagePullPolicy'] === 'Always') {
    events.record(about, 'Normal', 'Pulling', `Pulling image ${image}`, field)
    events.record(about, 'Normal', 'Pulled', `Successfully pulled image ${image} in 0s (0s including waiting). Image size: 0 bytes.`, field)
  } else {
    events.record(about, 'Normal', 'Pulled', `Container image ${image} already present on machine and can be accessed by the pod`, field)
  }
  events.record(about, 'Normal', 'Created', 'Container created', field)
  events.record(about, 'Normal', 'Started', 'Container started', field)
}

/** The kubelet's warning as a container that exited waits for its restart. */
function recordBackOff(events: EventRecorder, pod: KubeObject, container: Obj, field: string): void {
  const where = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`
  events.record(aboutPod(pod), 'Warning', 'BackOff', `Back-off restarting failed container ${String(container['name'])} in pod ${where}`, field)
}

/** The start events of every app container of the pod. */
function recordStart(events: EventRecorder, pod: KubeObject): void {
  for (const container of list(obj(pod['spec'])['containers'])) recordContainerStart(events, pod, container, containerField(container))
}

/** The kubelet's event as it stops the containers of a running pod being deleted. */
function recordStop(events: EventRecorder, pod: KubeObject): void {
  const about = aboutPod(pod)
  for (const container of list(obj(pod['spec'])['containers'])) {
    events.record(about, 'Normal', 'Killing', `Stopping container ${String(container['name'])}`, containerField(container))
  }
}

/**
 * A pod's status while its init containers run (Pending) or after one failed for good (Failed): its app containers
 * not created yet, waiting `PodInitializing`, and the conditions with upstream's reasons and messages.
 */
function initializingStatus(pod: KubeObject, status: Obj, init: InitContainersStep, at: string): Obj {
  const failed = init.outcome === 'failed'
  const waiting = list(obj(pod['spec'])['containers']).map((c) => ({
    name: c['name'],
    image: c['image'],
    imageID: '',
    ready: false,
    started: false,
    restartCount: 0,
    state: { waiting: { reason: 'PodInitializing' } },
  }))
  const notInitialized = `containers with incomplete status: [${init.incomplete.join(' ')}]`
  const notReady = failed ? undefined : `containers with unready status: [${waiting.map((c) => String(c.name)).join(' ')}]`
  const unready = failed ? 'PodFailed' : 'ContainersNotReady'
  return {
    ...status,
    phase: failed ? 'Failed' : 'Pending',
    conditions: keptTransitions(status, [
      condition('PodReadyToStartContainers', 'True', at),
      condition('Initialized', 'False', at, 'ContainersNotInitialized', notInitialized),
      condition('Ready', 'False', at, unready, notReady),
      condition('ContainersReady', 'False', at, unready, notReady),
      condition('PodScheduled', 'True', at),
    ]),
    initContainerStatuses: init.statuses,
    containerStatuses: waiting,
  }
}

/** A pod the kubelet stopped at its activeDeadlineSeconds: Failed, its containers killed. */
function deadlineExceededStatus(pod: KubeObject, status: Obj, at: string): Obj {
  const killed = { terminated: { exitCode: 137, reason: 'Error', startedAt: status['startTime'] ?? at, finishedAt: at } }
  return { ...status, phase: 'Failed', reason: 'DeadlineExceeded', message: DEADLINE_EXCEEDED_MESSAGE, containerStatuses: containerStatuses(pod, killed, false) }
}

function condition(type: string, status: string, at: string, reason?: string, message?: string): Obj {
  return { type, status, lastProbeTime: null, lastTransitionTime: at, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }
}

/** `conditions`, each keeping the transition time the pod's status has for it where its status did not change. */
function keptTransitions(status: Obj, conditions: Obj[]): Obj[] {
  const held = new Map(list(status['conditions']).map((c) => [c['type'], c]))
  return conditions.map((c) => {
    const before = held.get(c['type'])
    return before && before['status'] === c['status'] && before['lastTransitionTime'] ? { ...c, lastTransitionTime: before['lastTransitionTime'] } : c
  })
}

export async function startKubelet({ client, informers, options, asItself, now, logger }: KubeletContext): Promise<() => void> {
  const names = nodeNames(options)
  const indexOf = new Map(names.map((n, i) => [n, i]))
  const podInformer = informers.informer(podEntry)
  const nextIp = new Map<string, number>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const later = (ms: number, key: string): void => {
    if (ms <= 0) return queue.add(key)
    // Beyond what a timer can wait (`sleep infinity`): the pod's next change brings it back, if any.
    if (ms > LONGEST_TIMER_MS) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      queue.add(key)
    }, ms)
    ;(timer as { unref?: () => void }).unref?.()
    timers.add(timer)
  }
  /** When each pod was seen bound and when it started, to honour the delays. */
  const boundAt = new Map<string, number>()
  /** When each running pod's app containers started (after its init containers), to time their exits. */
  const appStartedAt = new Map<string, number>()
  /** Pods admitted to run, until they finish or go: admission checks against these, as the kubelet's does. */
  const admitted = new Map<string, KubeObject>()
  const admittedOn = (nodeName: string, except: string): KubeObject[] =>
    [...admitted].filter(([k, p]) => k !== except && obj(p['spec'])['nodeName'] === nodeName).map(([, p]) => p)

  /** Each node's event recorder, kept so that its repeated events are counted on the first. */
  const recorders = new Map<string, EventRecorder>()
  const recorderOf = (nodeName: string, kubelet: ObjectClient): EventRecorder => {
    let recorder = recorders.get(nodeName)
    if (!recorder) recorders.set(nodeName, (recorder = clientEventRecorder(kubelet, 'kubelet', now, logger, nodeName)))
    return recorder
  }

  const sync = async (key: string): Promise<void> => {
    const [namespace = '', name = ''] = key.split('/')
    const pod = podInformer.get(namespace, name)
    const nodeName = String(obj(pod?.['spec'])['nodeName'] ?? '')
    const index = indexOf.get(nodeName)
    if (!pod || index === undefined) return
    const kubelet = nodeClient(client, nodeName, asItself)
    const events = recorderOf(nodeName, kubelet)
    const status = obj(pod['status'])
    const at = formatTimestamp(now())
    try {
      if (pod.metadata.deletionTimestamp) {
        if (status['phase'] === 'Running') recordStop(events, pod)
        await kubelet.delete(podEntry, namespace, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } })
        return
      }
      const phase = status['phase']
      if (phase === 'Succeeded' || phase === 'Failed') return void admitted.delete(key)
      // A pod running before this kubelet started (the server restarted on etcd) holds its ports too.
      if (phase === 'Running') admitted.set(key, pod)
      // spec.activeDeadlineSeconds counts from the pod's start on the node; it may be changed while the pod runs.
      const deadline = activeDeadlineOf(pod)
      if (deadline !== undefined) {
        if (deadline > Date.now()) {
          if (deadline - Date.now() <= LONGEST_TIMER_MS) later(deadline - Date.now(), key)
        } else {
          events.record(aboutPod(pod), 'Normal', 'DeadlineExceeded', DEADLINE_EXCEEDED_MESSAGE)
          await kubelet.updateStatus(podEntry, namespace, { ...pod, status: deadlineExceededStatus(pod, status, at) })
          boundAt.delete(key)
          admitted.delete(key)
          appStartedAt.delete(key)
          return
        }
      }
      const since = boundAt.get(key) ?? Date.now()
      boundAt.set(key, since)
      if (phase !== 'Running') {
        const wait = since + (options.startDelayMs ?? 0) - Date.now()
        if (wait > 0) return later(wait, key)
        // The kubelet's admission, once: a pod bound here whose host port a pod it admitted holds is refused.
        if (!admitted.has(key) && hostPortTaken(pod, admittedOn(nodeName, key))) {
          events.record(aboutPod(pod), 'Warning', 'NodePorts', 'Predicate NodePorts failed')
          await kubelet.updateStatus(podEntry, namespace, { ...pod, status: { ...status, phase: 'Failed', reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed' } })
          boundAt.delete(key)
          return
        }
        admitted.set(key, pod)
        // The sandbox's address, given once: it holds through the init containers.
        let podIP = typeof status['podIP'] === 'string' && status['podIP'] ? status['podIP'] : undefined
        if (!podIP) {
          const ip = nextIp.get(nodeName) ?? 2
          nextIp.set(nodeName, ip + 1)
          podIP = `10.244.${index}.${ip}`
        }
        const placed = { hostIP: nodeAddress(index), hostIPs: [{ ip: nodeAddress(index) }], podIP, podIPs: [{ ip: podIP }], startTime: status['startTime'] ?? at }
        const init = stepInitContainers(pod, options.runDurationMs ?? 0, { nowMs: Date.now(), at })
        // Events once the status they tell of is written (a conflict writes neither): after the write that waits on them.
        const recordInitStarts = (): void => {
          init.started.forEach((container) => recordContainerStart(events, pod, container, initContainerField(container)))
          init.backedOff.forEach((container) => recordBackOff(events, pod, container, initContainerField(container)))
        }
        const initStatuses = init.statuses.length ? { initContainerStatuses: init.statuses } : {}
        if (init.outcome !== 'done') {
          if (init.wakeInMs !== undefined) later(init.wakeInMs, key)
          if (!init.changed) return
          await kubelet.updateStatus(podEntry, namespace, { ...pod, status: { ...initializingStatus(pod, status, init, at), ...placed } })
          recordInitStarts()
          if (init.outcome === 'failed') {
            boundAt.delete(key)
            admitted.delete(key)
          }
          return
        }
        appStartedAt.set(key, Date.now())
        await kubelet.updateStatus(podEntry, namespace, {
          ...pod,
          status: {
            ...status,
            ...placed,
            phase: 'Running',
            conditions: keptTransitions(status, [condition('PodReadyToStartContainers', 'True', at), condition('Initialized', 'True', at), condition('Ready', 'True', at), condition('ContainersReady', 'True', at), condition('PodScheduled', 'True', at)]),
            ...initStatuses,
            containerStatuses: containerStatuses(pod, { running: { startedAt: at } }, true),
          },
        })
        recordInitStarts()
        recordStart(events, pod)
        const runMs = runMsOf(pod, options.runDurationMs ?? 0)
        if (exits(pod) && runMs <= LONGEST_TIMER_MS) later(runMs, key)
        return
      }
      if (!exits(pod)) return restartContainers(pod, status, kubelet, events, key, at)
      const runMs = runMsOf(pod, options.runDurationMs ?? 0)
      if (runMs > LONGEST_TIMER_MS) return
      const wait = (appStartedAt.get(key) ?? since + (options.startDelayMs ?? 0)) + runMs - Date.now()
      if (wait > 0) return later(wait, key)
      const exitCodes = exitCodesOf(pod)
      const startedAt = String(obj(obj(list(status['containerStatuses'])[0]?.['state'])['running'])['startedAt'] ?? at)
      const terminated = (i: number): Obj => {
        const exitCode = exitCodes[i] ?? 0
        return { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: at } }
      }
      await kubelet.updateStatus(podEntry, namespace, {
        ...pod,
        status: {
          ...status,
          phase: exitCodes.every((code) => code === 0) ? 'Succeeded' : 'Failed',
          conditions: list(status['conditions']).map((c) => (c['type'] === 'Ready' || c['type'] === 'ContainersReady' ? condition(String(c['type']), 'False', at, 'PodCompleted') : c)),
          containerStatuses: containerStatuses(pod, terminated, false),
        },
      })
      boundAt.delete(key)
      admitted.delete(key)
      appStartedAt.delete(key)
    } catch (err) {
      // The pod changed or went meanwhile: its next event brings it back.
      if (!hasStatusCode(err, 409) && !hasStatusCode(err, 404)) throw err
    }
  }

  /** A running pod under restartPolicy Always: its containers that end are started again, not ready meanwhile. */
  const restartContainers = async (pod: KubeObject, status: Obj, kubelet: ObjectClient, events: EventRecorder, key: string, at: string): Promise<void> => {
    const step = stepRestartingContainers(pod, { nowMs: Date.now(), at })
    if (!step) return
    if (step.wakeInMs !== undefined) later(step.wakeInMs, key)
    if (!step.changed) return
    const ready = step.unready.length === 0
    const message = `containers with unready status: [${step.unready.join(' ')}]`
    const readiness = (c: Obj): Obj => (ready ? condition(String(c['type']), 'True', at) : condition(String(c['type']), 'False', at, 'ContainersNotReady', message))
    const conditions = list(status['conditions']).map((c) => (c['type'] === 'Ready' || c['type'] === 'ContainersReady' ? readiness(c) : c))
    await kubelet.updateStatus(podEntry, pod.metadata.namespace ?? '', { ...pod, status: { ...status, conditions: keptTransitions(status, conditions), containerStatuses: step.statuses } })
    for (const container of step.started) recordContainerStart(events, pod, container, containerField(container))
    for (const container of step.backedOff) recordBackOff(events, pod, container, containerField(container))
  }

  const queue = new WorkQueue(sync, { logger, name: 'simulated-kubelet' })
  const enqueue = (pod: KubeObject): void => {
    if (indexOf.has(String(obj(pod['spec'])['nodeName'] ?? ''))) queue.add(`${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`)
  }
  await podInformer.synced
  const unsubscribe = podInformer.addHandlers({
    onAdd: enqueue,
    onUpdate: (_before, pod) => enqueue(pod),
    onDelete: (pod) => {
      const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`
      boundAt.delete(key)
      admitted.delete(key)
      appStartedAt.delete(key)
    },
  })
  return () => {
    unsubscribe()
    queue.stop()
    for (const timer of timers) clearTimeout(timer)
  }
}
