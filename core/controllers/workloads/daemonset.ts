/**
 * The DaemonSet controller (upstream's pkg/controller/daemon, `daemonset`):
 * one pod of the DaemonSet on each node its template fits (nodeSelector,
 * required node affinity, taints against the template's tolerations and
 * the daemon ones), each pinned to its node by a required node affinity on
 * `metadata.name` and bound by the scheduler. Pods on nodes that no longer
 * fit go, failed ones are replaced after a back-off, and a template change
 * rolls out node by node (RollingUpdate within maxUnavailable or maxSurge)
 * or waits for pods to be deleted (OnDelete). Each template is kept as a
 * ControllerRevision whose hash labels the pods made from it.
 */
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { nodes as nodeEntry } from '../../resources/core/nodes.js'
import { pods as podEntry } from '../../resources/core/pods.js'
import { controllerRevisions, daemonSets } from '../../resources/groups/apps.js'
import type { ControllerContext, StopController, WorkloadController } from './context.js'
import { cleanupHistory, constructHistory } from './daemonset-history.js'
import {
  allowsSurge,
  byCreationAndBinding,
  daemonPodTemplate,
  dsSpecOf,
  FailedPodBackoff,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  pinnedToNode,
  REVISION_HASH_LABEL,
  surgeCount,
  targetNodeName,
  templateGenerationOf,
  unavailableCount,
} from './daemonset-pods.js'
import { Expectations } from './expectations.js'
import { controllerOf, isNotFound, keyOf, splitKey } from './object-keys.js'
import { claim } from './owned.js'
import { isPodAvailable, isPodReady } from './pod-state.js'
import { ownedPodHandlers } from './owned-pods.js'
import { podFromTemplate, slowStart } from './pods-from-template.js'
import { WorkQueue } from './work-queue.js'
import { appendAll } from '../../machinery/append-all.js'

/** Upstream's burstReplicas for this controller: the most pods made or deleted in one pass. */
const BURST_REPLICAS = 250

type Obj = Record<string, unknown>
const phaseOf = (pod: KubeObject): string => String(((pod['status'] as Obj | undefined) ?? {})['phase'] ?? '')
const isTerminal = (pod: KubeObject): boolean => phaseOf(pod) === 'Succeeded' || phaseOf(pod) === 'Failed'
const selectorOf = (ds: KubeObject): LabelSelector => labelSelectorFromObject(dsSpecOf(ds).selector as LabelSelectorObject | undefined)

export const daemonSetController: WorkloadController = {
  name: 'daemonset',
  serviceAccount: 'daemon-set-controller',
  eventComponent: 'daemonset-controller',
  onByDefault: true,
  start: (ctx) => startDaemonSets(ctx),
}

async function startDaemonSets(ctx: ControllerContext): Promise<StopController> {
  const dsInformer = ctx.informers.informer(daemonSets)
  const podInformer = ctx.informers.informer(podEntry)
  const nodeInformer = ctx.informers.informer(nodeEntry)
  const historyInformer = ctx.informers.informer(controllerRevisions)
  const expectations = new Expectations(ctx.now)
  const backoff = new FailedPodBackoff()
  const queue = new WorkQueue((key) => sync(key), { logger: ctx.logger, name: 'daemonset' })
  const typed = (ds: KubeObject): KubeObject => ({ ...ds, apiVersion: 'apps/v1', kind: 'DaemonSet' })

  /** The DaemonSet a pod's or a revision's controller reference names, if it is still the same object. */
  const ownerOf = (object: KubeObject): KubeObject | undefined => {
    const ref = controllerOf(object)
    if (!ref || ref.kind !== 'DaemonSet') return undefined
    const ds = dsInformer.get(object.metadata.namespace ?? '', ref.name)
    return ds?.metadata.uid === ref.uid ? ds : undefined
  }
  const matching = (object: KubeObject): KubeObject[] => dsInformer.list(object.metadata.namespace ?? '').filter((ds) => selectorOf(ds).matches(object.metadata.labels))
  const enqueueMatching = (object: KubeObject): void => {
    for (const ds of matching(object)) queue.add(keyOf(ds))
  }

  await Promise.all([dsInformer.synced, podInformer.synced, nodeInformer.synced, historyInformer.synced])
  const stops = [
    dsInformer.addHandlers({
      onAdd: (ds) => queue.add(keyOf(ds)),
      onUpdate: (_, ds) => queue.add(keyOf(ds)),
      onDelete: (ds) => expectations.forget(keyOf(ds)),
    }),
    podInformer.addHandlers(
      ownedPodHandlers({
        ownerOf,
        matching,
        minReadySeconds: (ds) => dsSpecOf(ds).minReadySeconds ?? 0,
        queue,
        expectations,
      }),
    ),
    nodeInformer.addHandlers({
      onAdd: (node) => {
        for (const ds of dsInformer.list()) if (nodeShouldRunDaemonPod(node, ds).shouldRun) queue.add(keyOf(ds))
      },
      onUpdate: (previous, node) => {
        for (const ds of dsInformer.list()) if (!sameJson(nodeShouldRunDaemonPod(previous, ds), nodeShouldRunDaemonPod(node, ds))) queue.add(keyOf(ds))
      },
      onDelete: () => {
        for (const ds of dsInformer.list()) queue.add(keyOf(ds))
      },
    }),
    historyInformer.addHandlers({
      onAdd: (history) => (ownerOf(history) ? queue.add(keyOf(ownerOf(history)!)) : !controllerOf(history) && enqueueMatching(history)),
      onUpdate: (_, history) => (ownerOf(history) ? queue.add(keyOf(ownerOf(history)!)) : undefined),
      onDelete: (history) => (ownerOf(history) ? queue.add(keyOf(ownerOf(history)!)) : undefined),
    }),
  ]

  async function sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key)
    const stored = dsInformer.get(namespace, name)
    if (!stored) return expectations.forget(key)
    const ds = typed(stored)
    if (ds.metadata.deletionTimestamp) return
    const nodes = nodeInformer.list()
    const selector = selectorOf(ds)
    const pods = await claim(podInformer.list(namespace), {
      client: ctx.client,
      resource: podEntry,
      owner: ds,
      selector,
      recheckOwner: () => ctx.client.get(daemonSets, namespace, name).catch(() => undefined),
    })
    const { current, old } = await constructHistory(ctx, ds, historyInformer, selector, pods)
    const hash = current.metadata.labels?.[REVISION_HASH_LABEL] ?? ''
    if (!expectations.satisfied(key)) return writeStatus(key, ds, nodes, pods, hash, false)
    let failure: unknown
    try {
      await manage(key, ds, nodes, pods, hash)
      // A rolling update steps only on what the informer shows: not while the writes just sent are unseen.
      if (expectations.satisfied(key) && (dsSpecOf(ds).updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') await rollingUpdate(key, ds, nodes, pods, hash)
      await cleanupHistory(ctx, ds, old, pods)
    } catch (err) {
      failure = err
    }
    await writeStatus(key, ds, nodes, pods, hash, true)
    if (failure) throw failure
  }

  /** The DaemonSet's pods by the node each is for; finished pods being deleted are left out. */
  function podsByNode(pods: readonly KubeObject[]): Map<string, KubeObject[]> {
    const byNode = new Map<string, KubeObject[]>()
    for (const pod of pods) {
      if (isTerminal(pod) && pod.metadata.deletionTimestamp) continue
      const node = targetNodeName(pod)
      if (node === undefined) continue
      byNode.set(node, [...(byNode.get(node) ?? []), pod])
    }
    return byNode
  }

  /** Pods to make on nodes lacking one, pods to delete where they should not run, failed or in excess (upstream's manage). */
  async function manage(key: string, ds: KubeObject, nodes: readonly KubeObject[], pods: readonly KubeObject[], hash: string): Promise<void> {
    const byNode = podsByNode(pods)
    const needing: string[] = []
    const toDelete: KubeObject[] = []
    for (const node of nodes) {
      const result = podsForNode(ds, node, byNode.get(node.metadata.name ?? ''), hash)
      appendAll(needing, result.needing)
      appendAll(toDelete, result.toDelete)
    }
    // Pods meant for a node that no longer exists never get bound: nothing else would delete them.
    const known = new Set(nodes.map((n) => n.metadata.name))
    for (const [node, onNode] of byNode) if (!known.has(node)) appendAll(toDelete, onNode.filter((p) => !(p['spec'] as Obj | undefined)?.['nodeName']))
    await syncNodes(key, ds, toDelete, needing, hash)
  }

  function podsForNode(ds: KubeObject, node: KubeObject, onNode: KubeObject[] | undefined, hash: string): { needing: string[]; toDelete: KubeObject[] } {
    const nodeName = node.metadata.name ?? ''
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds)
    const needing: string[] = []
    const toDelete: KubeObject[] = []
    if (shouldRun && !onNode) return { needing: [nodeName], toDelete }
    if (!onNode) return { needing, toDelete }
    if (!shouldContinueRunning) return { needing, toDelete: onNode.filter((p) => !p.metadata.deletionTimestamp) }
    const running: KubeObject[] = []
    for (const pod of onNode) {
      if (pod.metadata.deletionTimestamp) continue
      const phase = phaseOf(pod)
      if (phase === 'Failed') {
        // A kubelet refusing the pod would have it made and failed in a loop: wait between replacements.
        const backoffKey = `${ds.metadata.uid}/${(ds['status'] as Obj | undefined)?.['observedGeneration'] ?? 0}/${nodeName}`
        const now = ctx.now().getTime()
        const wait = backoff.remainingMs(backoffKey, now)
        if (wait > 0) {
          queue.addAfter(keyOf(ds), wait)
          continue
        }
        backoff.next(backoffKey, now)
        ctx.events.record(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to kill it`)
        toDelete.push(pod)
      } else if (phase === 'Succeeded') {
        ctx.events.record(ds, 'Normal', 'SucceededDaemonPod', `Found succeeded daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to delete it`)
        toDelete.push(pod)
      } else running.push(pod)
    }
    running.sort(byCreationAndBinding)
    if (!allowsSurge(ds)) {
      // One pod per node: the oldest stays.
      appendAll(toDelete, running.slice(1))
      return { needing, toDelete }
    }
    if (running.length <= 1) {
      if (running.length === 0 && shouldRun) needing.push(nodeName)
      return { needing, toDelete }
    }
    // Surging: an old and a new pod may share the node until the new one is available (or the old one stops being ready).
    let oldestNew: KubeObject | undefined
    let oldestOld: KubeObject | undefined
    for (const pod of running) {
      if (pod.metadata.labels?.[REVISION_HASH_LABEL] === hash) {
        if (!oldestNew) {
          oldestNew = pod
          continue
        }
      } else if (!oldestOld) {
        oldestOld = pod
        continue
      }
      toDelete.push(pod)
    }
    if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, dsSpecOf(ds).minReadySeconds ?? 0, ctx.now()))) toDelete.push(oldestOld)
    return { needing, toDelete }
  }

  /** Creates the pods for `needing` (slow start: batches of 1, 2, 4 ...) and deletes `toDelete` (upstream's syncNodes). */
  async function syncNodes(key: string, ds: KubeObject, toDelete: KubeObject[], needing: string[], hash: string): Promise<void> {
    const creates = needing.slice(0, BURST_REPLICAS)
    const deletes = toDelete.slice(0, BURST_REPLICAS)
    if (!creates.length && !deletes.length) return
    expectations.expect(key, creates.length, deletes.map((p) => p.metadata.name ?? ''))
    const template = daemonPodTemplate(ds, hash)
    const { error, skipped } = await slowStart(creates, (node) => createPod(key, ds, template, node))
    for (let i = 0; i < skipped; i++) expectations.createFailed(key)
    const deleteErrors = (await Promise.all(deletes.map((pod) => deletePod(key, ds, pod)))).filter((e) => e !== undefined)
    if (error !== undefined) throw error
    if (deleteErrors.length) throw deleteErrors[0]
  }

  async function createPod(key: string, ds: KubeObject, template: ReturnType<typeof daemonPodTemplate>, nodeName: string): Promise<unknown> {
    const pod = podFromTemplate(ds, template, pinnedToNode(template.spec ?? {}, nodeName))
    try {
      const created = await ctx.client.create(podEntry, ds.metadata.namespace ?? '', pod)
      ctx.events.record(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`)
      return undefined
    } catch (err) {
      expectations.createFailed(key)
      // A namespace being deleted refuses every create: nothing to report.
      if (/because it is being terminated/.test(String((err as Error).message))) return undefined
      ctx.events.record(ds, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`)
      return err
    }
  }

  async function deletePod(key: string, ds: KubeObject, pod: KubeObject): Promise<unknown> {
    const podName = pod.metadata.name ?? ''
    try {
      await ctx.client.delete(podEntry, pod.metadata.namespace ?? '', podName, { preconditions: { uid: pod.metadata.uid ?? '' } })
      ctx.events.record(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${podName}`)
      return undefined
    } catch (err) {
      expectations.deleted(key, podName)
      if (isNotFound(err)) return undefined
      ctx.events.record(ds, 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`)
      return err
    }
  }

  /**
   * One step of a rolling update (upstream's rollingUpdate): without surge,
   * old pods are deleted while no more than maxUnavailable nodes lack an
   * available pod (the manage pass then makes the new ones); with surge, new
   * pods are made beside old ones up to maxSurge, and an old pod goes once
   * the new one beside it is available.
   */
  async function rollingUpdate(key: string, ds: KubeObject, nodes: readonly KubeObject[], pods: readonly KubeObject[], hash: string): Promise<void> {
    const byNode = podsByNode(pods)
    let desired = 0
    for (const node of nodes) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue
      desired++
      if (!byNode.has(node.metadata.name ?? '')) byNode.set(node.metadata.name ?? '', [])
    }
    let maxUnavailable = unavailableCount(ds, desired)
    const maxSurge = surgeCount(ds, desired)
    if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1
    const generation = templateGenerationOf(ds)
    const minReady = dsSpecOf(ds).minReadySeconds ?? 0
    const now = ctx.now()
    const available = (pod: KubeObject): boolean => isPodAvailable(pod, minReady, now)

    if (maxSurge === 0) {
      let unavailable = 0
      const replaceNow: KubeObject[] = []
      const candidates: KubeObject[] = []
      for (const onNode of byNode.values()) {
        const found = updatedAndOld(onNode, hash, generation)
        if (!found || (!found.updated && !found.old) || (found.updated && found.old)) {
          // The manage pass sorts these nodes out; meanwhile they count as unavailable.
          unavailable++
          continue
        }
        if (found.updated) {
          if (!available(found.updated)) unavailable++
          continue
        }
        const old = found.old!
        if (!available(old)) {
          replaceNow.push(old)
          unavailable++
        } else if (unavailable < maxUnavailable) candidates.push(old)
      }
      const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length)
      return syncNodes(key, ds, [...replaceNow, ...candidates.slice(0, room)], [], hash)
    }

    const allowedNew: string[] = []
    const candidateNew: string[] = []
    const oldToDelete: KubeObject[] = []
    let surging = 0
    const nodesByName = new Map(nodes.map((n) => [n.metadata.name ?? '', n]))
    for (const [nodeName, onNode] of byNode) {
      const found = updatedAndOld(onNode, hash, generation)
      if (!found) {
        surging++
        continue
      }
      if (!found.old) continue
      if (!found.updated) {
        if (!available(found.old)) {
          const node = nodesByName.get(nodeName)
          if (node && nodeShouldRunDaemonPod(node, ds).shouldRun) allowedNew.push(nodeName)
        } else if (surging < maxSurge) candidateNew.push(nodeName)
        continue
      }
      if (!available(found.updated)) surging++
      else oldToDelete.push(found.old)
    }
    const room = Math.min(Math.max(0, maxSurge - surging), candidateNew.length)
    return syncNodes(key, ds, oldToDelete, [...allowedNew, ...candidateNew.slice(0, room)], hash)
  }

  /** The node's pod of the current template and its old one; undefined when it has two of either (upstream's findUpdatedPodsOnNode). */
  function updatedAndOld(onNode: readonly KubeObject[], hash: string, generation: number | undefined): { updated?: KubeObject; old?: KubeObject } | undefined {
    let updated: KubeObject | undefined
    let old: KubeObject | undefined
    for (const pod of onNode) {
      if (pod.metadata.deletionTimestamp) continue
      if (isPodUpdated(pod, hash, generation)) {
        if (updated) return undefined
        updated = pod
      } else {
        if (old) return undefined
        old = pod
      }
    }
    return { updated, old }
  }

  /** Counts the nodes and their pods into status (upstream's updateDaemonSetStatus); zero omitempty counts are left out. */
  async function writeStatus(key: string, ds: KubeObject, nodes: readonly KubeObject[], pods: readonly KubeObject[], hash: string, observe: boolean): Promise<void> {
    const byNode = podsByNode(pods)
    const minReady = dsSpecOf(ds).minReadySeconds ?? 0
    const generation = templateGenerationOf(ds)
    const now = ctx.now()
    let desired = 0
    let current = 0
    let misscheduled = 0
    let ready = 0
    let available = 0
    let updated = 0
    for (const node of nodes) {
      const onNode = byNode.get(node.metadata.name ?? '') ?? []
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) {
        if (onNode.length) misscheduled++
        continue
      }
      desired++
      if (!onNode.length) continue
      current++
      const pod = [...onNode].sort(byCreationAndBinding)[0]!
      if (isPodReady(pod)) {
        ready++
        if (isPodAvailable(pod, minReady, now)) available++
      }
      if (isPodUpdated(pod, hash, generation)) updated++
    }
    const previous = (ds['status'] as Obj | undefined) ?? {}
    const observedGeneration = observe ? ds.metadata.generation : (previous['observedGeneration'] as number | undefined)
    const status: Obj = {
      ...previous,
      currentNumberScheduled: current,
      numberMisscheduled: misscheduled,
      desiredNumberScheduled: desired,
      numberReady: ready,
      observedGeneration: observedGeneration || undefined,
      updatedNumberScheduled: updated || undefined,
      numberAvailable: available || undefined,
      numberUnavailable: desired - available || undefined,
    }
    for (const field of Object.keys(status)) if (status[field] === undefined) delete status[field]
    if (!sameJson(previous, status)) {
      await ctx.client.updateStatus(daemonSets, ds.metadata.namespace ?? '', { ...ds, status }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err
      })
    }
    if (minReady > 0 && ready !== available) queue.addAfter(key, minReady * 1000 + 10)
  }

  return () => {
    for (const stop of stops) stop()
    queue.stop()
  }
}
