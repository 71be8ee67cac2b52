/**
 * How a controller that keeps pods (ReplicaSet, ReplicationController,
 * DaemonSet) hears of them, as upstream's addPod, updatePod and deletePod
 * do: a change to an owned pod queues its owner and settles what the owner
 * expects to see; an orphan, or a pod whose labels changed, queues every
 * owner whose selector matches it, which may adopt it; a pod that has just
 * become ready queues its owner again once `minReadySeconds` have passed.
 */
import type { InformerHandlers } from '../../client/informer.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import type { Expectations } from './expectations.js'
import { isPodReady } from './pod-state.js'
import type { WorkQueue } from './work-queue.js'
import { controllerOf, keyOf } from './object-keys.js'

export interface PodOwners {
  /** The live owner a pod's controller reference names (same uid), if it is one of this controller's. */
  ownerOf(pod: KubeObject): KubeObject | undefined
  /** The owners in the pod's namespace whose selector matches its labels. */
  matching(pod: KubeObject): Iterable<KubeObject>
  minReadySeconds(owner: KubeObject): number
  queue: Pick<WorkQueue, 'add' | 'addAfter'>
  expectations: Pick<Expectations, 'created' | 'deleted'>
}

export function ownedPodHandlers(owners: PodOwners): InformerHandlers {
  const { ownerOf, queue, expectations } = owners
  const changed = (pod: KubeObject, previous?: KubeObject): void => {
    const owner = ownerOf(pod)
    const previousOwner = previous && ownerOf(previous)
    if (previousOwner && previousOwner.metadata.uid !== owner?.metadata.uid) queue.add(keyOf(previousOwner))
    if (owner) {
      if (pod.metadata.deletionTimestamp && !previous?.metadata.deletionTimestamp) expectations.deleted(keyOf(owner), pod.metadata.name ?? '')
      queue.add(keyOf(owner))
      // Ready now: available once minReadySeconds have passed.
      const minReady = owners.minReadySeconds(owner)
      if (minReady > 0 && previous && !isPodReady(previous) && isPodReady(pod)) queue.addAfter(keyOf(owner), minReady * 1000 + 10)
    } else if (!controllerOf(pod) || (previous && !sameJson(previous.metadata.labels, pod.metadata.labels))) {
      for (const candidate of owners.matching(pod)) queue.add(keyOf(candidate))
    }
  }
  return {
    onAdd: (pod) => {
      const owner = ownerOf(pod)
      if (owner && !pod.metadata.deletionTimestamp) expectations.created(keyOf(owner))
      changed(pod)
    },
    onUpdate: (previous, pod) => changed(pod, previous),
    onDelete: (pod) => {
      const owner = ownerOf(pod)
      if (!owner) return
      expectations.deleted(keyOf(owner), pod.metadata.name ?? '')
      queue.add(keyOf(owner))
    },
  }
}
