/**
 * What a Deployment's pass does to its ReplicaSets' sizes (upstream's
 * rolling.go, recreate.go and the scaling half of sync.go): RollingUpdate
 * grows the new ReplicaSet within maxSurge and shrinks the old ones within
 * maxUnavailable; Recreate scales the old ones to zero, waits for their
 * pods to go, then sizes the new one; a scale or a paused Deployment
 * resizes every ReplicaSet in proportion.
 */
import type { KubeObject } from '../../machinery/object.js'
import { isActivePod } from './pod-state.js'
import { DeploymentSync, newReplicaSetReplicas } from './deployment-sync.js'
import {
  active,
  annotatedNumber,
  availableReplicas,
  byCreation,
  DESIRED_REPLICAS,
  isComplete,
  isRollingUpdate,
  MAX_REPLICAS,
  maxSurge,
  maxUnavailable,
  replicasOf,
  specOf,
  specReplicas,
  statusOf,
} from './deployment-util.js'

export class DeploymentRollout extends DeploymentSync {
  /** Whether some active ReplicaSet was sized for another replica count (upstream's isScalingEvent). */
  async isScalingEvent(): Promise<boolean> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(false)
    return active([...oldRSs, newRS]).some((rs) => {
      const desired = annotatedNumber(rs, DESIRED_REPLICAS)
      return desired !== undefined && desired !== replicasOf(this.d)
    })
  }

  /** A scale or a paused Deployment: resize, clean up history if paused, report (upstream's sync). */
  async sync(): Promise<void> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(false)
    await this.scale(newRS, oldRSs)
    const fresh = (rs: KubeObject | undefined): KubeObject | undefined => rs && this.rsList.find((r) => r.metadata.uid === rs.metadata.uid)
    const olds = oldRSs.map(fresh).filter((rs): rs is KubeObject => !!rs)
    if (specOf(this.d).paused) await this.cleanup(olds)
    await this.syncStatus([...olds, ...(fresh(newRS) ? [fresh(newRS)!] : [])], fresh(newRS))
  }

  /** Proportional scaling across ReplicaSets (upstream's scale). */
  private async scale(newRS: KubeObject | undefined, oldRSs: KubeObject[]): Promise<void> {
    const desired = replicasOf(this.d)
    const sets = active([...oldRSs, newRS])
    const only = sets.length === 1 ? sets[0] : sets.length === 0 ? (newRS ?? [...oldRSs].sort(byCreation).at(-1)) : undefined
    if (only) {
      if (replicasOf(only) !== desired) await this.scaleReplicaSet(only, desired)
      return
    }
    if (newRS && replicasOf(newRS) === desired && annotatedNumber(newRS, DESIRED_REPLICAS) === desired && (statusOf(newRS).availableReplicas ?? 0) === desired) {
      for (const old of active(oldRSs)) await this.scaleReplicaSet(old, 0)
      return
    }
    if (!isRollingUpdate(this.d)) return
    const allowed = desired > 0 ? desired + maxSurge(this.d) : 0
    const toAdd = allowed - specReplicas(sets)
    const bySize = (a: KubeObject, b: KubeObject): number => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? -byCreation(a, b) : byCreation(a, b))
    sets.sort(bySize)
    let added = 0
    const sizes = sets.map((rs) => {
      if (toAdd === 0) return replicasOf(rs)
      const proportion = this.proportion(rs, toAdd, added)
      added += proportion
      return replicasOf(rs) + proportion
    })
    if (toAdd !== 0) sizes[0] = Math.max(0, sizes[0]! + toAdd - added)
    for (const [i, rs] of sets.entries()) await this.scaleReplicaSet(rs, sizes[i]!, toAdd > 0 ? 'up' : toAdd < 0 ? 'down' : undefined)
  }

  private proportion(rs: KubeObject, toAdd: number, added: number): number {
    if (replicasOf(rs) === 0 || toAdd === added) return 0
    const desired = replicasOf(this.d)
    let fraction: number
    if (desired === 0) fraction = -replicasOf(rs)
    else {
      const annotated = annotatedNumber(rs, MAX_REPLICAS) ?? statusOf(this.d).replicas ?? 0
      fraction = Math.round((replicasOf(rs) * (desired + maxSurge(this.d))) / annotated) - replicasOf(rs)
    }
    const allowed = toAdd - added
    return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed)
  }

  async rolling(): Promise<void> {
    const { newRS, oldRSs } = await this.replicaSetsAndRevision(true)
    if (await this.reconcileNew(newRS!)) return this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
    if (await this.reconcileOld(this.fresh(oldRSs), this.current(newRS)!)) return this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
    const olds = this.fresh(oldRSs)
    if (isComplete(this.d, statusOf(this.d))) await this.cleanup(olds)
    await this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
  }

  /** `podsOf(rs)` lists the pods a ReplicaSet controls. */
  async recreate(podsOf: (rs: KubeObject) => KubeObject[]): Promise<void> {
    let { newRS, oldRSs } = await this.replicaSetsAndRevision(false)
    let scaledDown = false
    for (const old of active(oldRSs)) {
      await this.scaleReplicaSet(old, 0)
      scaledDown = true
    }
    if (scaledDown) return this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
    const olds = this.fresh(oldRSs)
    const oldPodsRunning = olds.some((rs) => (statusOf(rs).replicas ?? 0) > 0 || podsOf(rs).some(isActivePod))
    if (oldPodsRunning) return this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
    if (!newRS) ({ newRS, oldRSs } = await this.replicaSetsAndRevision(true))
    await this.scaleReplicaSet(this.current(newRS)!, replicasOf(this.d))
    if (isComplete(this.d, statusOf(this.d))) await this.cleanup(this.fresh(oldRSs))
    await this.syncRolloutStatus(this.all(oldRSs, newRS), this.current(newRS))
  }

  private fresh(sets: KubeObject[]): KubeObject[] {
    return sets.map((rs) => this.current(rs)).filter((rs): rs is KubeObject => !!rs)
  }

  private all(oldRSs: KubeObject[], newRS: KubeObject | undefined): KubeObject[] {
    const fresh = this.current(newRS)
    return [...this.fresh(oldRSs), ...(fresh ? [fresh] : [])]
  }

  /** Grows (or trims) the new ReplicaSet; answers whether it changed. */
  private async reconcileNew(newRS: KubeObject): Promise<boolean> {
    const desired = replicasOf(this.d)
    if (replicasOf(newRS) === desired) return false
    if (replicasOf(newRS) > desired) {
      await this.scaleReplicaSet(newRS, desired, 'down')
      return true
    }
    const size = newReplicaSetReplicas(this.d, this.rsList, newRS)
    if (size === replicasOf(newRS)) return false
    await this.scaleReplicaSet(newRS, size, 'up')
    return true
  }

  /** Shrinks old ReplicaSets as far as maxUnavailable allows, unhealthy pods first; answers whether any changed. */
  private async reconcileOld(oldRSs: KubeObject[], newRS: KubeObject): Promise<boolean> {
    if (specReplicas(oldRSs) === 0) return false
    const minAvailable = replicasOf(this.d) - maxUnavailable(this.d)
    const newUnavailable = replicasOf(newRS) - (statusOf(newRS).availableReplicas ?? 0)
    let room = specReplicas(this.rsList) - minAvailable - newUnavailable
    if (room <= 0) return false
    let scaled = 0
    for (const rs of [...oldRSs].sort(byCreation)) {
      if (scaled >= room) break
      const unhealthy = replicasOf(rs) - (statusOf(rs).availableReplicas ?? 0)
      if (replicasOf(rs) === 0 || unhealthy <= 0) continue
      const down = Math.min(room - scaled, unhealthy)
      await this.scaleReplicaSet(rs, replicasOf(rs) - down)
      scaled += down
    }
    room -= scaled
    const available = availableReplicas(this.rsList)
    if (available > minAvailable) {
      const total = available - minAvailable
      let down = 0
      for (const rs of this.fresh(oldRSs).sort(byCreation)) {
        if (down >= total) break
        if (replicasOf(rs) === 0) continue
        const count = Math.min(replicasOf(rs), total - down)
        await this.scaleReplicaSet(rs, replicasOf(rs) - count)
        down += count
      }
      scaled += down
    }
    return scaled > 0
  }
}
