/**
 * The two rollout strategies of a Deployment (upstream's rolling.go and
 * recreate.go): RollingUpdate grows the new ReplicaSet within maxSurge and
 * shrinks the old ones within maxUnavailable; Recreate scales the old ones
 * to zero, waits for their pods to go, then sizes the new one.
 */
import type { KubeObject } from '../../machinery/object.js'
import { isActivePod } from './pod-state.js'
import { DeploymentSync, newReplicaSetReplicas } from './deployment-sync.js'
import { active, availableReplicas, byCreation, isComplete, maxUnavailable, replicasOf, specReplicas, statusOf } from './deployment-util.js'

export class DeploymentRollout extends DeploymentSync {
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
