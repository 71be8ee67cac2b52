/**
 * Upstream's StatefulSet controller (`statefulset`): pods with stable names
 * and storage, made in ordinal order one at a time (OrderedReady) or all at
 * once (Parallel), removed from the highest ordinal down; the template's
 * history kept as ControllerRevisions; pods replaced from the highest
 * ordinal down to the partition on a RollingUpdate, or when deleted on
 * OnDelete; and the status `kubectl rollout status` reads.
 */
import { labelSelectorFromObject, type LabelSelectorObject } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { persistentVolumeClaims } from '../../resources/core/volumes.js'
import { pods as podsEntry } from '../../resources/core/pods.js'
import { controllerRevisions, statefulSets } from '../../resources/groups/apps.js'
import type { ControllerContext, StopController, WorkloadController } from './context.js'
import { NamedExpectations } from './named-expectations.js'
import { controllerOf, isNotFound, keyOf, splitKey } from './object-keys.js'
import { claim } from './owned.js'
import {
  claimOwners,
  claimsFor,
  countReplicas,
  identityMatches,
  inOrdinalRange,
  isCreated,
  isFailed,
  isHealthy,
  isMemberOf,
  isPending,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  newPod,
  ordinalOf,
  replicasOf,
  revisionOfPod,
  setSpecOf,
  startOrdinal,
  storageMatches,
  updateIdentity,
  updateStorage,
} from './statefulset-pods.js'
import { templateOf } from './revision-patch.js'
import { newRevision, revisionNumber, sameRevision } from './statefulset-revisions.js'
import { WorkQueue } from './work-queue.js'

export const statefulSetController: WorkloadController = {
  name: 'statefulset',
  serviceAccount: 'statefulset-controller',
  onByDefault: true,
  start: startStatefulSetController,
}

interface SetStatus {
  observedGeneration?: number
  replicas: number
  readyReplicas?: number
  currentReplicas?: number
  updatedReplicas?: number
  currentRevision?: string
  updateRevision?: string
  collisionCount?: number
  availableReplicas: number
}

/**
 * The most pods one pass creates (upstream's batches stop growing at 500); the rest wait for the next pass,
 * which the new pods' events bring, so that one set of many replicas cannot hold the server's thread.
 */
const MAX_CREATES_PER_PASS = 500

const typedPod = (pod: KubeObject): KubeObject => ({ ...pod, apiVersion: 'v1', kind: 'Pod' })
const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err))

function startStatefulSetController(ctx: ControllerContext): StopController {
  const sets = ctx.informers.informer({ group: 'apps', version: 'v1', resource: 'statefulsets' })
  const pods = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
  const revisionInformer = ctx.informers.informer({ group: 'apps', version: 'v1', resource: 'controllerrevisions' })
  const claimInformer = ctx.informers.informer({ group: '', version: 'v1', resource: 'persistentvolumeclaims' })
  const expectations = new NamedExpectations()
  const queue = new WorkQueue((key) => reconcile(key), { logger: ctx.logger, name: 'statefulset' })
  const selectorOf = (set: KubeObject) => labelSelectorFromObject(setSpecOf(set).selector as LabelSelectorObject | undefined)

  const ownerOf = (pod: KubeObject): KubeObject | undefined => {
    const ref = controllerOf(pod)
    if (!ref || ref.kind !== 'StatefulSet') return undefined
    const set = sets.get(pod.metadata.namespace ?? '', ref.name)
    return set?.metadata.uid === ref.uid ? set : undefined
  }
  const podChanged = (pod: KubeObject, previous?: KubeObject): void => {
    const previousOwner = previous && ownerOf(previous)
    const owner = ownerOf(pod)
    if (previousOwner && previousOwner.metadata.uid !== owner?.metadata.uid) queue.add(keyOf(previousOwner))
    if (owner) {
      queue.add(keyOf(owner))
      const minReady = setSpecOf(owner).minReadySeconds ?? 0
      if (minReady > 0 && previous && !isRunningAndReady(previous) && isRunningAndReady(pod)) queue.addAfter(keyOf(owner), minReady * 1000 + 10)
      return
    }
    if (controllerOf(pod)) return
    for (const set of sets.list(pod.metadata.namespace ?? '')) if (isMemberOf(set, pod) && selectorOf(set).matches(pod.metadata.labels)) queue.add(keyOf(set))
  }

  const stopSets = sets.addHandlers({
    onAdd: (set) => queue.add(keyOf(set)),
    onUpdate: (_, set) => queue.add(keyOf(set)),
    onDelete: (set) => expectations.forget(keyOf(set)),
  })
  const stopPods = pods.addHandlers({
    onAdd: (pod) => podChanged(pod),
    onUpdate: (previous, pod) => podChanged(pod, previous),
    onDelete: (pod) => {
      const owner = ownerOf(pod)
      if (owner) queue.add(keyOf(owner))
    },
  })

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key)
    const stored = sets.get(namespace, name)
    if (!stored) return expectations.forget(key)
    const present = (podName: string): boolean => pods.get(namespace, podName) !== undefined
    const deleting = (podName: string): boolean => !!pods.get(namespace, podName)?.metadata.deletionTimestamp
    // Until the pods this controller made or deleted show in the informer, the counts would be stale.
    if (!expectations.satisfied(key, present, deleting)) return
    const set: KubeObject = { ...structuredClone(stored), apiVersion: 'apps/v1', kind: 'StatefulSet' }
    const selector = selectorOf(set)
    const recheckOwner = () => ctx.client.get(statefulSets, namespace, name).catch(() => undefined)
    const revisions = (await claim(revisionInformer.list(namespace), { client: ctx.client, resource: controllerRevisions, owner: set, selector, recheckOwner })).sort(
      (a, b) => revisionNumber(a) - revisionNumber(b),
    )
    const owned = await claim(
      pods.list(namespace).filter((pod) => isMemberOf(set, pod)),
      { client: ctx.client, resource: podsEntry, owner: set, selector, recheckOwner },
    )
    const { current, update, collisionCount } = await setRevisions(set, revisions)
    const status = await syncPods(key, set, current, update, collisionCount, owned)
    await writeStatus(set, status)
    await truncateHistory(set, owned, revisions, current, update)
    const minReady = setSpecOf(set).minReadySeconds ?? 0
    if (minReady > 0 && status.availableReplicas !== replicasOf(set)) queue.addAfter(key, minReady * 1000 + 10)
  }

  /** The current and update revisions, the update one made (or renumbered, on a rollback) as needed. */
  async function setRevisions(set: KubeObject, revisions: KubeObject[]): Promise<{ current: KubeObject; update: KubeObject; collisionCount: number }> {
    const status = (set['status'] as { collisionCount?: number; currentRevision?: string } | undefined) ?? {}
    let collisionCount = status.collisionCount ?? 0
    const next = revisions.length ? revisionNumber(revisions[revisions.length - 1]!) + 1 : 1
    let update = newRevision(set, setSpecOf(set).template, next, collisionCount)
    const equal = revisions.filter((r) => sameRevision(r, update))
    const last = revisions[revisions.length - 1]
    const newestEqual = equal[equal.length - 1]
    if (newestEqual && last && sameRevision(last, newestEqual)) update = last
    else if (newestEqual) update = await ctx.client.update(controllerRevisions, newestEqual.metadata.namespace ?? '', { ...newestEqual, revision: next })
    else {
      for (;;) {
        try {
          update = await ctx.client.create(controllerRevisions, set.metadata.namespace ?? '', update)
          break
        } catch (err) {
          if ((err as { code?: number }).code !== 409) throw err
          const existing = await ctx.client.get(controllerRevisions, set.metadata.namespace ?? '', update.metadata.name ?? '')
          if (sameRevision(existing, update)) {
            update = existing
            break
          }
          collisionCount++
          update = newRevision(set, setSpecOf(set).template, next, collisionCount)
        }
      }
    }
    const current = revisions.find((r) => r.metadata.name === status.currentRevision) ?? update
    return { current, update, collisionCount }
  }

  /** Brings the pods toward the spec and answers the status they add up to (upstream's updateStatefulSet). */
  async function syncPods(key: string, set: KubeObject, current: KubeObject, update: KubeObject, collisionCount: number, owned: KubeObject[]): Promise<SetStatus> {
    const spec = setSpecOf(set)
    const now = ctx.now()
    const minReady = spec.minReadySeconds ?? 0
    const start = startOrdinal(set)
    const currentName = current.metadata.name ?? ''
    const updateName = update.metadata.name ?? ''
    const currentTemplate = templateOf(current)
    const updateTemplate = templateOf(update)
    const status: SetStatus = {
      ...(set.metadata.generation ? { observedGeneration: set.metadata.generation } : {}),
      replicas: 0,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
      availableReplicas: 0,
    }
    const partition = spec.updateStrategy?.type === 'RollingUpdate' ? spec.updateStrategy.rollingUpdate?.partition : undefined
    const previousCurrent = (set['status'] as { currentReplicas?: number } | undefined)?.currentReplicas ?? 0
    const versionedPod = (ordinal: number): KubeObject => {
      const rolling = spec.updateStrategy?.type === 'RollingUpdate'
      const atCurrent = (rolling && partition === undefined && ordinal < start + previousCurrent) || (partition !== undefined && ordinal < start + partition)
      return atCurrent ? newPod(set, currentTemplate, ordinal, currentName) : newPod(set, updateTemplate, ordinal, updateName)
    }

    // The replicas by index: the pods owned, and those to create as a pass reaches them. Upstream makes
    // every missing one up front; here a set of a hundred million replicas would hold the server's thread
    // and memory until it failed, and again on every restart, so a pass costs what the pods it reaches do.
    const wanted = replicasOf(set)
    const replicas = new Map<number, KubeObject>()
    const condemned: KubeObject[] = []
    for (const pod of owned) {
      if (inOrdinalRange(set, pod)) replicas.set(ordinalOf(pod) - start, pod)
      else if (ordinalOf(pod) >= 0) condemned.push(pod)
    }
    const replicaAt = (i: number): KubeObject => {
      let pod = replicas.get(i)
      if (!pod) replicas.set(i, (pod = versionedPod(start + i)))
      return pod
    }
    const firstUnhealthyReplica = (): KubeObject | undefined => {
      for (let i = 0; i < wanted; i++) if (!isHealthy(replicaAt(i))) return replicaAt(i)
      return undefined
    }
    condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a))
    const firstUnhealthy = firstUnhealthyReplica() ?? [...condemned].reverse().find((p) => !isHealthy(p))

    const finish = (): SetStatus => {
      // A pod not made yet counts for nothing.
      const counts = countReplicas([...replicas.values(), ...condemned], minReady, ctx.now(), currentName, updateName)
      return { ...status, ...counts }
    }
    if (set.metadata.deletionTimestamp) return finish()

    const monotonic = spec.podManagementPolicy !== 'Parallel'

    /** One replica's step; answers true when an OrderedReady set must wait. */
    let creates = 0
    const processReplica = async (i: number): Promise<boolean> => {
      const ordinal = start + i
      let pod = replicaAt(i)
      if (isFailed(pod) || isSucceeded(pod)) {
        if (isFailed(pod)) ctx.events.record(set, 'Warning', 'RecreatingFailedPod', `StatefulSet ${set.metadata.namespace}/${set.metadata.name} is recreating failed Pod ${pod.metadata.name}`)
        else ctx.events.record(set, 'Normal', 'RecreatingTerminatedPod', `StatefulSet ${set.metadata.namespace}/${set.metadata.name} is recreating terminated Pod ${pod.metadata.name}`)
        await deletePod(key, set, pod)
        replicas.set(i, (pod = versionedPod(ordinal)))
        // The old pod must leave the informer before its successor is made under the same name.
        return true
      }
      if (!isCreated(pod)) {
        if (await claimIsStale(set, pod)) return true
        // The rest waits for the next pass, which the new pods' events bring.
        if (creates >= MAX_CREATES_PER_PASS) return true
        creates++
        await createPod(key, set, pod)
        return monotonic
      }
      if (isPending(pod)) await createClaims(set, pod)
      if (monotonic && (isTerminating(pod) || !isRunningAndReady(pod) || !isRunningAndAvailable(pod, minReady, now))) return true
      const retentionOk = await claimOwnersUpToDate(set, pod, false)
      if (identityMatches(set, pod) && storageMatches(set, pod) && retentionOk) return false
      await fixPod(set, pod)
      return false
    }
    if (await runForAll(wanted, processReplica, monotonic, () => creates >= MAX_CREATES_PER_PASS)) return finish()

    for (const pod of condemned) await claimOwnersUpToDate(set, pod, true)

    /** One condemned pod's step, highest ordinal first. */
    const processCondemned = async (i: number): Promise<boolean> => {
      const pod = condemned[i]!
      if (isTerminating(pod)) return monotonic
      if (monotonic && pod !== firstUnhealthy && (!isRunningAndReady(pod) || !isRunningAndAvailable(pod, minReady, now))) return true
      await deletePod(key, set, pod)
      return monotonic
    }
    if (await runForAll(condemned.length, processCondemned, monotonic, () => false)) return finish()

    const result = finish()
    if (spec.updateStrategy?.type === 'OnDelete') return result

    // RollingUpdate: replace the highest-ordinal pod not at the update revision, down to the partition, one at a time.
    for (let target = wanted - 1; target >= (partition ?? 0); target--) {
      const pod = replicaAt(target)
      if (revisionOfPod(pod) !== updateName && !isTerminating(pod)) {
        await deletePod(key, set, pod)
        result.currentReplicas = (result.currentReplicas ?? 0) - 1
        return result
      }
      if (!isHealthy(pod)) return result
    }
    return result
  }

  /**
   * Runs `step` over 0..count-1: in order, stopping at the first that says wait (monotonic); or side by
   * side in slow-start batches (1, 2, 4, ... up to MAX_CREATES_PER_PASS), a step's wait ignored, stopping
   * after a batch where a step failed, as upstream's slowStartBatch (a quota that refuses pods costs one
   * refusal, not one per missing replica), or once the pass made all the pods it may (then true: wait).
   */
  async function runForAll(count: number, step: (i: number) => Promise<boolean>, monotonic: boolean, passFull: () => boolean): Promise<boolean> {
    if (monotonic) {
      for (let i = 0; i < count; i++) if (await step(i)) return true
      return false
    }
    for (let done = 0, batch = 1; done < count; batch = Math.min(batch * 2, MAX_CREATES_PER_PASS)) {
      if (passFull()) return true
      const size = Math.min(batch, count - done)
      const results = await Promise.allSettled(Array.from({ length: size }, (_, k) => step(done + k)))
      done += size
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) throw failed.reason
    }
    return false
  }

  async function createPod(key: string, set: KubeObject, pod: KubeObject): Promise<void> {
    const podName = pod.metadata.name ?? ''
    try {
      await createClaims(set, pod)
    } catch (err) {
      ctx.events.record(set, 'Warning', 'FailedCreate', `create Pod ${podName} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`)
      throw err
    }
    expectations.expectCreate(key, podName)
    try {
      await ctx.client.create(podsEntry, set.metadata.namespace ?? '', pod)
    } catch (err) {
      expectations.forgetCreate(key, podName)
      if ((err as { code?: number }).code === 409) throw err
      ctx.events.record(set, 'Warning', 'FailedCreate', `create Pod ${podName} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`)
      throw err
    }
    ctx.events.record(set, 'Normal', 'SuccessfulCreate', `create Pod ${podName} in StatefulSet ${set.metadata.name} successful`)
  }

  async function deletePod(key: string, set: KubeObject, pod: KubeObject): Promise<void> {
    const podName = pod.metadata.name ?? ''
    expectations.expectDelete(key, podName)
    try {
      await ctx.client.delete(podsEntry, pod.metadata.namespace ?? '', podName, { preconditions: { uid: pod.metadata.uid ?? '' } })
    } catch (err) {
      if (isNotFound(err)) return
      ctx.events.record(set, 'Warning', 'FailedDelete', `delete Pod ${podName} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`)
      throw err
    }
    ctx.events.record(set, 'Normal', 'SuccessfulDelete', `delete Pod ${podName} in StatefulSet ${set.metadata.name} successful`)
  }

  /** Makes the pod's missing claims (upstream's createPersistentVolumeClaims); a claim being deleted is an error. */
  async function createClaims(set: KubeObject, pod: KubeObject): Promise<void> {
    const namespace = set.metadata.namespace ?? ''
    const problems: string[] = []
    for (const { claim: wanted } of claimsFor(set, ordinalOf(pod))) {
      const claimName = wanted.metadata.name ?? ''
      const existing = claimInformer.get(namespace, claimName)
      if (existing) {
        if (existing.metadata.deletionTimestamp) problems.push(`pvc ${claimName} is being deleted`)
        continue
      }
      const owners = claimOwners(wanted, set, typedPod(pod))
      if (owners?.length) wanted.metadata.ownerReferences = owners
      try {
        await ctx.client.create(persistentVolumeClaims, namespace, wanted)
        ctx.events.record(set, 'Normal', 'SuccessfulCreate', `create Claim ${claimName} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`)
      } catch (err) {
        if ((err as { code?: number }).code === 409) continue
        problems.push(`failed to create PVC ${claimName}: ${errorText(err)}`)
        ctx.events.record(set, 'Warning', 'FailedCreate', `create Claim ${claimName} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`)
      }
    }
    if (problems.length) throw new Error(problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`)
  }

  /** With whenScaled Delete, a claim still owned by an earlier pod of the same name blocks the new pod until the collector removes it. */
  async function claimIsStale(set: KubeObject, pod: KubeObject): Promise<boolean> {
    if (setSpecOf(set).persistentVolumeClaimRetentionPolicy?.whenScaled !== 'Delete') return false
    return claimsFor(set, ordinalOf(pod)).some(({ claim: wanted }) => {
      const existing = claimInformer.get(set.metadata.namespace ?? '', wanted.metadata.name ?? '')
      return (existing?.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'Pod' && ref.name === pod.metadata.name && ref.uid !== pod.metadata.uid)
    })
  }

  /** Sets the owner references of the pod's claims as the retention policy asks; with `fix` false, only answers whether they are right. */
  async function claimOwnersUpToDate(set: KubeObject, pod: KubeObject, fix: boolean): Promise<boolean> {
    let upToDate = true
    for (const { claim: wanted } of claimsFor(set, ordinalOf(pod))) {
      const existing = claimInformer.get(set.metadata.namespace ?? '', wanted.metadata.name ?? '')
      if (!existing) continue
      const owners = claimOwners(existing, set, typedPod(pod))
      if (!owners || sameJson(owners, existing.metadata.ownerReferences ?? [])) continue
      upToDate = false
      if (fix) await ctx.client.update(persistentVolumeClaims, existing.metadata.namespace ?? '', { ...existing, metadata: { ...existing.metadata, ownerReferences: owners } })
    }
    return upToDate
  }

  /** Restores a pod's identity, storage and claim owners (upstream's UpdateStatefulPod). */
  async function fixPod(set: KubeObject, pod: KubeObject): Promise<void> {
    const copy = structuredClone(pod)
    const podName = copy.metadata.name ?? ''
    try {
      let dirty = false
      if (!identityMatches(set, copy)) {
        updateIdentity(set, copy)
        dirty = true
      }
      if (!storageMatches(set, copy)) {
        updateStorage(set, copy)
        dirty = true
        await createClaims(set, copy)
      }
      await claimOwnersUpToDate(set, copy, true)
      if (!dirty) return
      await ctx.client.update(podsEntry, copy.metadata.namespace ?? '', copy)
      ctx.events.record(set, 'Normal', 'SuccessfulUpdate', `update Pod ${podName} in StatefulSet ${set.metadata.name} successful`)
    } catch (err) {
      ctx.events.record(set, 'Warning', 'FailedUpdate', `update Pod ${podName} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`)
      throw err
    }
  }

  /** Writes the status when it changed, the rolling update marked complete once every pod is updated and ready. */
  async function writeStatus(set: KubeObject, computed: SetStatus): Promise<void> {
    const status = { ...computed }
    const wanted = replicasOf(set)
    if (setSpecOf(set).updateStrategy?.type === 'RollingUpdate' && status.updatedReplicas === wanted && status.readyReplicas === wanted && status.replicas === wanted) {
      status.currentReplicas = status.updatedReplicas
      status.currentRevision = status.updateRevision
    }
    // Zero counts are left out, as upstream's omitempty fields are; replicas and availableReplicas always show.
    for (const field of ['observedGeneration', 'readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (!status[field]) delete status[field]
    for (const field of ['currentRevision', 'updateRevision'] as const) if (!status[field]) delete status[field]
    if (sameJson(set['status'] ?? {}, status)) return
    await ctx.client.updateStatus(statefulSets, set.metadata.namespace ?? '', { ...set, status })
  }

  /** Deletes the oldest revisions no pod uses beyond revisionHistoryLimit. */
  async function truncateHistory(set: KubeObject, owned: KubeObject[], revisions: KubeObject[], current: KubeObject, update: KubeObject): Promise<void> {
    const live = new Set([current.metadata.name, update.metadata.name, ...owned.map(revisionOfPod)])
    const history = revisions.filter((r) => !live.has(r.metadata.name))
    const limit = setSpecOf(set).revisionHistoryLimit ?? 10
    for (const revision of history.slice(0, Math.max(0, history.length - limit))) {
      await ctx.client.delete(controllerRevisions, revision.metadata.namespace ?? '', revision.metadata.name ?? '').catch((err: unknown) => {
        if (!isNotFound(err)) throw err
      })
    }
  }

  return () => {
    stopSets()
    stopPods()
    queue.stop()
  }
}
