/**
 * One pass over one Deployment (upstream's sync.go): finding or making the
 * new ReplicaSet and keeping revisions, scaling one ReplicaSet with its
 * event, history cleanup, and the status written back. Scaling and the
 * rollout strategies (deployment-rollout.ts) build on it.
 */
import { StatusError } from '../../machinery/status-error.js'
import type { KubeObject } from '../../machinery/object.js'
import { sameJson } from '../../machinery/same-json.js'
import { deployments, replicaSets } from '../../resources/groups/apps.js'
import type { ControllerContext } from './context.js'
import {
  byCreation,
  calculateStatus,
  compareRevisions,
  conditionOf,
  equalIgnoringHash,
  hasProgressDeadline,
  isComplete,
  isProgressing,
  isRollingUpdate,
  isTimedOut,
  maxSurge,
  nextRevision,
  POD_TEMPLATE_HASH,
  podTemplateHash,
  removeCondition,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  REVISION,
  revisionOf,
  setCondition,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  specOf,
  specReplicas,
  statusOf,
  untilDeadline,
  type WorkloadStatus,
} from './deployment-util.js'
import { controllerOf } from './object-keys.js'
import { controllerRefTo } from './owned.js'

export class DeploymentSync {
  /** Set when the deployment should be looked at again after a delay (the progress deadline). */
  recheckAfterMs: number | undefined

  constructor(
    protected readonly ctx: ControllerContext,
    protected d: KubeObject,
    protected rsList: KubeObject[],
  ) {}

  protected get namespace(): string {
    return this.d.metadata.namespace ?? ''
  }

  /** The ReplicaSet whose template is the Deployment's: the oldest of them, as upstream picks. */
  findNewReplicaSet(): KubeObject | undefined {
    return [...this.rsList].sort(byCreation).find((rs) => equalIgnoringHash(specOf(rs).template, specOf(this.d).template))
  }

  /** The new ReplicaSet (made if asked and missing) and every other one; keeps the Deployment's revision in step. */
  async replicaSetsAndRevision(create: boolean): Promise<{ newRS: KubeObject | undefined; oldRSs: KubeObject[] }> {
    const found = this.findNewReplicaSet()
    const oldRSs = this.rsList.filter((rs) => rs !== found)
    const newRS = await this.newReplicaSet(found, oldRSs, create)
    return { newRS, oldRSs }
  }

  private async newReplicaSet(existing: KubeObject | undefined, oldRSs: KubeObject[], create: boolean): Promise<KubeObject | undefined> {
    const newRevision = nextRevision(oldRSs)
    if (existing) {
      let rs = structuredClone(existing)
      const annotationsChanged = setNewReplicaSetAnnotations(this.d, rs, newRevision, true)
      const minReadyChanged = (specOf(rs).minReadySeconds ?? 0) !== (specOf(this.d).minReadySeconds ?? 0)
      if (annotationsChanged || minReadyChanged) {
        specOf(rs).minReadySeconds = specOf(this.d).minReadySeconds ?? 0
        rs = await this.ctx.client.update(replicaSets, this.namespace, rs)
        this.replace(existing, rs)
      }
      let needsUpdate = this.setRevision(rs.metadata.annotations?.[REVISION] ?? '')
      const status = statusOf(this.d)
      if (!conditionOf(status, 'Progressing') && hasProgressDeadline(this.d)) {
        setCondition(status, { type: 'Progressing', status: 'True', reason: 'FoundNewReplicaSet', message: `Found new replica set "${rs.metadata.name}"` }, this.ctx.now())
        needsUpdate = true
      }
      if (needsUpdate) await this.writeStatus(status)
      return rs
    }
    if (!create) return undefined

    const template = structuredClone(specOf(this.d).template ?? {})
    const hash = podTemplateHash(specOf(this.d).template, statusOf(this.d).collisionCount)
    const labels = { ...template.metadata?.labels, [POD_TEMPLATE_HASH]: hash }
    template.metadata = { ...template.metadata, labels }
    const selector = structuredClone(specOf(this.d).selector ?? {})
    selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH]: hash }
    const name = `${this.d.metadata.name}-${hash}`
    const fresh: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: this.namespace, labels, ownerReferences: [controllerRefTo(this.d)] },
      spec: { replicas: 0, minReadySeconds: specOf(this.d).minReadySeconds ?? 0, selector, template },
    }
    const replicas = newReplicaSetReplicas(this.d, [...oldRSs, fresh], fresh)
    specOf(fresh).replicas = replicas
    setNewReplicaSetAnnotations(this.d, fresh, newRevision, false)
    let created: KubeObject
    let alreadyExists = false
    try {
      created = await this.ctx.client.create(replicaSets, this.namespace, fresh)
    } catch (err) {
      if (!(err instanceof StatusError) || err.code !== 409) {
        const message = `Failed to create new replica set "${name}": ${(err as Error).message}`
        if (hasProgressDeadline(this.d)) {
          const status = statusOf(this.d)
          setCondition(status, { type: 'Progressing', status: 'False', reason: 'ReplicaSetCreateError', message }, this.ctx.now())
          await this.writeStatus(status).catch(() => undefined)
        }
        this.ctx.events.record(this.d, 'Warning', 'FailedCreate', message)
        throw err
      }
      // A ReplicaSet of that name: this Deployment's own (an informer behind), or a hash collision.
      const other = await this.ctx.client.get(replicaSets, this.namespace, name)
      if (controllerOf(other)?.uid !== this.d.metadata.uid || !equalIgnoringHash(specOf(other).template, specOf(this.d).template)) {
        const status = statusOf(this.d)
        status.collisionCount = (status.collisionCount ?? 0) + 1
        await this.writeStatus(status)
        throw err
      }
      created = other
      alreadyExists = true
    }
    this.rsList.push(created)
    if (!alreadyExists && replicas > 0) this.ctx.events.record(this.d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${name} from 0 to ${replicas}`)
    let needsUpdate = this.setRevision(String(newRevision))
    const status = statusOf(this.d)
    if (!alreadyExists && hasProgressDeadline(this.d)) {
      setCondition(status, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', message: `Created new replica set "${name}"` }, this.ctx.now())
      needsUpdate = true
    }
    if (needsUpdate) await this.writeStatus(status)
    return created
  }

  private setRevision(revision: string): boolean {
    if (!revision || this.d.metadata.annotations?.[REVISION] === revision) return false
    this.d.metadata.annotations = { ...this.d.metadata.annotations, [REVISION]: revision }
    return true
  }

  private replace(previous: KubeObject, next: KubeObject): void {
    const at = this.rsList.indexOf(previous)
    if (at >= 0) this.rsList[at] = next
  }

  /** Writes status (and the revision annotation, which the status subresource keeps) and takes the stored Deployment back. */
  protected async writeStatus(status: WorkloadStatus): Promise<void> {
    this.d = await this.ctx.client.updateStatus(deployments, this.namespace, { ...this.d, status })
    this.d = { ...this.d, apiVersion: 'apps/v1', kind: 'Deployment' }
  }

  /** Sets one ReplicaSet's size and its replica annotations; records the scaling. Answers the stored ReplicaSet. */
  async scaleReplicaSet(rs: KubeObject, size: number, operation?: string): Promise<KubeObject> {
    const desired = replicasOf(this.d)
    const max = desired + maxSurge(this.d)
    const sizeChanged = replicasOf(rs) !== size
    if (!sizeChanged && !replicasAnnotationsNeedUpdate(rs, desired, max)) return rs
    const previous = replicasOf(rs)
    const copy = structuredClone(rs)
    specOf(copy).replicas = size
    setReplicasAnnotations(copy, desired, max)
    const stored = await this.ctx.client.update(replicaSets, this.namespace, copy)
    this.replace(rs, stored)
    if (sizeChanged) {
      const verb = operation ?? (previous < size ? 'up' : 'down')
      this.ctx.events.record(this.d, 'Normal', 'ScalingReplicaSet', `Scaled ${verb} replica set ${rs.metadata.name} from ${previous} to ${size}`)
    }
    return stored
  }

  /** Deletes the oldest scaled-down ReplicaSets beyond revisionHistoryLimit (upstream's cleanupDeployment). */
  async cleanup(oldRSs: KubeObject[]): Promise<void> {
    const limit = specOf(this.d).revisionHistoryLimit as number | undefined
    if (limit === undefined) return
    const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp)
    const surplus = alive.length - limit
    if (surplus <= 0) return
    alive.sort((a, b) => compareRevisions(revisionOf(a), revisionOf(b)) || byCreation(a, b))
    for (const rs of alive.slice(0, surplus)) {
      if ((statusOf(rs).replicas ?? 0) !== 0 || replicasOf(rs) !== 0 || (rs.metadata.generation ?? 0) > (statusOf(rs).observedGeneration ?? 0)) continue
      await this.ctx.client.delete(replicaSets, this.namespace, rs.metadata.name ?? '', { preconditions: { uid: rs.metadata.uid ?? '' } }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 404) throw err
      })
    }
  }

  /** Writes the status the ReplicaSets add up to, if it changed (upstream's syncDeploymentStatus). */
  async syncStatus(all: KubeObject[], newRS: KubeObject | undefined): Promise<void> {
    const status = calculateStatus(all, newRS, this.d, this.ctx.now())
    if (!sameJson(status, statusOf(this.d))) await this.writeStatus(status)
  }

  /** The status with the Progressing condition brought up to date (upstream's syncRolloutStatus). */
  async syncRolloutStatus(all: KubeObject[], newRS: KubeObject | undefined): Promise<void> {
    const now = this.ctx.now()
    const status = calculateStatus(all, newRS, this.d, now)
    if (!hasProgressDeadline(this.d)) removeCondition(status, 'Progressing')
    const current = conditionOf(status, 'Progressing')
    const complete = status.replicas === status.updatedReplicas && current?.reason === 'NewReplicaSetAvailable'
    const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${this.d.metadata.name}"`
    if (hasProgressDeadline(this.d) && !complete) {
      if (isComplete(this.d, status)) {
        setCondition(status, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `${subject} has successfully progressed.` }, now)
      } else if (isProgressing(this.d, status)) {
        // A fresh update time on every step, the transition time kept: the deadline counts from the last progress.
        const keep = current?.status === 'True' ? current.lastTransitionTime : undefined
        removeCondition(status, 'Progressing')
        setCondition(status, { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `${subject} is progressing.` }, now)
        if (keep) conditionOf(status, 'Progressing')!.lastTransitionTime = keep
      } else if (isTimedOut(this.d, status, now)) {
        setCondition(status, { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `${subject} has timed out progressing.` }, now)
      }
    }
    const failure = newRS && conditionOf(statusOf(newRS), 'ReplicaFailure')
    if (failure) setCondition(status, { type: 'ReplicaFailure', status: failure.status, reason: failure.reason, message: failure.message }, now)
    else removeCondition(status, 'ReplicaFailure')
    const wait = untilDeadline(this.d, status, now)
    if (wait !== undefined) this.recheckAfterMs = Math.max(wait, 0) + 1000
    if (!sameJson(status, statusOf(this.d))) await this.writeStatus(status)
  }

  /** The Progressing condition of a paused or resumed Deployment (upstream's checkPausedConditions). */
  async checkPaused(): Promise<void> {
    if (!hasProgressDeadline(this.d)) return
    const status = statusOf(this.d)
    const cond = conditionOf(status, 'Progressing')
    if (cond?.reason === 'ProgressDeadlineExceeded') return
    const pausedShown = cond?.reason === 'DeploymentPaused'
    const paused = !!specOf(this.d).paused
    if (paused === pausedShown) return
    const [reason, message] = paused ? ['DeploymentPaused', 'Deployment is paused'] : ['DeploymentResumed', 'Deployment is resumed']
    setCondition(status, { type: 'Progressing', status: 'Unknown', reason, message }, this.ctx.now())
    await this.writeStatus(status)
  }

  /** Replicas of every ReplicaSet, refreshed after the writes of this pass. */
  current(rs: KubeObject | undefined): KubeObject | undefined {
    return rs && this.rsList.find((r) => r.metadata.uid === rs.metadata.uid)
  }
}

/** How big the new ReplicaSet may grow now (upstream's NewRSNewReplicas). */
export function newReplicaSetReplicas(d: KubeObject, all: readonly KubeObject[], newRS: KubeObject): number {
  if (!isRollingUpdate(d)) return replicasOf(d)
  const current = specReplicas(all)
  const maxTotal = replicasOf(d) + maxSurge(d)
  if (current >= maxTotal) return replicasOf(newRS)
  return replicasOf(newRS) + Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS))
}
