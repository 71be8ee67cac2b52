/**
 * The logic upstream's ReplicaSet controller shares with the
 * ReplicationController manager: keep as many active pods as the owner
 * asks for, made from its template, adopting matching orphans and releasing
 * pods that stop matching, and report what exists in the owner's status.
 */
import type { LabelSelector } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { formatTimestamp } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import { pods as podsEntry } from '../../resources/core/pods.js'
import type { ControllerContext, StopController, WorkloadController } from './context.js'
import { Expectations } from './expectations.js'
import { controllerOf, keyOf, splitKey } from './object-keys.js'
import { claim } from './owned.js'
import { deletionOrder, isActivePod, isPodAvailable, isPodReady } from './pod-state.js'
import { ownedPodHandlers } from './owned-pods.js'
import { podFromTemplate, slowStart } from './pods-from-template.js'
import { WorkQueue } from './work-queue.js'

/** Upstream's burstReplicas: the most pods made or deleted in one pass. */
const BURST_REPLICAS = 500

export interface ReplicaKind {
  name: string
  serviceAccount: string
  resource: ResourceEntry
  selectorOf(owner: KubeObject): LabelSelector
}

interface TemplateMeta {
  labels?: Record<string, string>
  annotations?: Record<string, string>
  finalizers?: string[]
}
type Spec = { replicas?: number; minReadySeconds?: number; template?: { metadata?: TemplateMeta; spec?: unknown } }
const specOf = (owner: KubeObject): Spec => (owner['spec'] as Spec | undefined) ?? {}
const statusOf = (owner: KubeObject): Record<string, unknown> => (owner['status'] as Record<string, unknown> | undefined) ?? {}

export function replicaController(kind: ReplicaKind): WorkloadController {
  return { name: kind.name, serviceAccount: kind.serviceAccount, onByDefault: true, start: (ctx) => startReplicaControl(kind, ctx) }
}

function startReplicaControl(kind: ReplicaKind, ctx: ControllerContext): StopController {
  const owners = ctx.informers.informer(kind.resource)
  const pods = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
  const expectations = new Expectations(ctx.now)
  const typed = (owner: KubeObject): KubeObject => ({ ...owner, apiVersion: kind.resource.group ? `${kind.resource.group}/${kind.resource.version}` : kind.resource.version, kind: kind.resource.kind })
  const queue = new WorkQueue((key) => reconcile(key), { logger: ctx.logger, name: kind.name })

  /** The owner a pod's controller reference names, if it is still the same object. */
  const ownerOf = (pod: KubeObject): KubeObject | undefined => {
    const ref = controllerOf(pod)
    if (!ref || ref.kind !== kind.resource.kind) return undefined
    const owner = owners.get(pod.metadata.namespace ?? '', ref.name)
    return owner?.metadata.uid === ref.uid ? owner : undefined
  }
  const stopOwners = owners.addHandlers({
    onAdd: (owner) => queue.add(keyOf(owner)),
    onUpdate: (_, owner) => queue.add(keyOf(owner)),
    onDelete: (owner) => expectations.forget(keyOf(owner)),
  })
  const stopPods = pods.addHandlers(
    ownedPodHandlers({
      ownerOf,
      matching: (pod) => owners.list(pod.metadata.namespace ?? '').filter((owner) => kind.selectorOf(owner).matches(pod.metadata.labels)),
      minReadySeconds: (owner) => specOf(owner).minReadySeconds ?? 0,
      queue,
      expectations,
    }),
  )

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key)
    const stored = owners.get(namespace, name)
    if (!stored) return expectations.forget(key)
    const owner = typed(stored)
    const selector = kind.selectorOf(owner)
    const satisfied = expectations.satisfied(key)
    const active = pods.list(namespace).filter(isActivePod)
    const owned = await claim(active, {
      client: ctx.client,
      resource: podsEntry,
      owner,
      selector,
      recheckOwner: () => ctx.client.get(kind.resource, namespace, name).catch(() => undefined),
    })
    let failure: { error: Error; reason: string } | undefined
    if (satisfied && !owner.metadata.deletionTimestamp) failure = await manage(key, owner, owned)
    await writeStatus(owner, owned, failure)
    if (failure) throw failure.error
  }

  async function manage(key: string, owner: KubeObject, owned: KubeObject[]): Promise<{ error: Error; reason: string } | undefined> {
    const diff = owned.length - (specOf(owner).replicas ?? 1)
    if (diff < 0) {
      const wanted = Math.min(-diff, BURST_REPLICAS)
      expectations.expect(key, wanted, [])
      const error = await createInBatches(key, owner, wanted)
      return error && { error, reason: 'FailedCreate' }
    }
    if (diff > 0) {
      const victims = [...owned].sort(deletionOrder).slice(0, Math.min(diff, BURST_REPLICAS))
      expectations.expect(key, 0, victims.map((p) => p.metadata.name ?? ''))
      const errors = await Promise.all(victims.map((pod) => deletePod(key, owner, pod)))
      const error = errors.find((e) => e !== undefined)
      return error && { error, reason: 'FailedDelete' }
    }
    return undefined
  }

  /** Upstream's slow start (pods-from-template.ts): a refused create stops the batches, and what was never tried is not expected. */
  async function createInBatches(key: string, owner: KubeObject, wanted: number): Promise<Error | undefined> {
    const { error, skipped } = await slowStart(Array.from({ length: wanted }), () => createPod(key, owner))
    for (let i = 0; i < skipped; i++) expectations.createFailed(key)
    return error
  }

  async function createPod(key: string, owner: KubeObject): Promise<Error | undefined> {
    const pod = podFromTemplate(owner, specOf(owner).template ?? {})
    try {
      const created = await ctx.client.create(podsEntry, owner.metadata.namespace ?? '', pod)
      ctx.events.record(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`)
      return undefined
    } catch (err) {
      expectations.createFailed(key)
      ctx.events.record(owner, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`)
      return err as Error
    }
  }

  async function deletePod(key: string, owner: KubeObject, pod: KubeObject): Promise<Error | undefined> {
    const podName = pod.metadata.name ?? ''
    try {
      await ctx.client.delete(podsEntry, pod.metadata.namespace ?? '', podName, { preconditions: { uid: pod.metadata.uid ?? '' } })
      ctx.events.record(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${podName}`)
      return undefined
    } catch (err) {
      expectations.deleted(key, podName)
      if ((err as { code?: number }).code === 404) return undefined
      ctx.events.record(owner, 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`)
      return err as Error
    }
  }

  async function writeStatus(owner: KubeObject, owned: KubeObject[], failure: { error: Error; reason: string } | undefined): Promise<void> {
    const now = ctx.now()
    const spec = specOf(owner)
    const minReady = spec.minReadySeconds ?? 0
    const templateLabels = spec.template?.metadata?.labels ?? {}
    const fullyLabeled = owned.filter((p) => Object.entries(templateLabels).every(([k, v]) => p.metadata.labels?.[k] === v)).length
    const ready = owned.filter(isPodReady).length
    const available = owned.filter((p) => isPodAvailable(p, minReady, now)).length
    const current = statusOf(owner)
    let conditions = ((current['conditions'] as Array<Record<string, unknown>> | undefined) ?? []).slice()
    const failureCondition = conditions.find((c) => c['type'] === 'ReplicaFailure')
    if (failure && !failureCondition) {
      conditions.push({ type: 'ReplicaFailure', status: 'True', lastTransitionTime: formatTimestamp(now), reason: failure.reason, message: failure.error.message })
    } else if (!failure && failureCondition) conditions = conditions.filter((c) => c !== failureCondition)
    // Zero counts are left out, as upstream's omitempty fields are.
    const status: Record<string, unknown> = {
      replicas: owned.length,
      ...(fullyLabeled ? { fullyLabeledReplicas: fullyLabeled } : {}),
      ...(ready ? { readyReplicas: ready } : {}),
      ...(available ? { availableReplicas: available } : {}),
      ...(owner.metadata.generation ? { observedGeneration: owner.metadata.generation } : {}),
      ...(conditions.length ? { conditions } : {}),
    }
    if (!sameJson(current, status)) await ctx.client.updateStatus(kind.resource, owner.metadata.namespace ?? '', { ...owner, status })
    const wanted = spec.replicas ?? 1
    if (!failure && minReady > 0 && ready === wanted && available !== wanted) queue.addAfter(keyOf(owner), minReady * 1000 + 10)
  }

  return () => {
    stopOwners()
    stopPods()
    queue.stop()
  }
}
