/**
 * Upstream's Deployment controller (`deployment`): owns ReplicaSets named
 * `<deployment>-<pod-template-hash>`, rolls the pods from one template to
 * the next by the Deployment's strategy, keeps revisions and history, and
 * reports replicas and the Available and Progressing conditions that
 * `kubectl rollout status` reads.
 */
import { labelSelectorFromObject, type LabelSelectorObject } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { deployments, replicaSets } from '../../resources/groups/apps.js'
import type { ControllerContext, StopController, WorkloadController } from './context.js'
import { DeploymentRollout } from './deployment-rollout.js'
import { specOf } from './deployment-util.js'
import { controllerOf, keyOf, splitKey } from './object-keys.js'
import { claim } from './owned.js'
import { WorkQueue } from './work-queue.js'

const BY_CONTROLLER = 'controller-uid'
const selectorOf = (d: KubeObject) => labelSelectorFromObject(specOf(d).selector as LabelSelectorObject | undefined)

export const deploymentController: WorkloadController = {
  name: 'deployment',
  serviceAccount: 'deployment-controller',
  onByDefault: true,
  start: startDeploymentController,
}

function startDeploymentController(ctx: ControllerContext): StopController {
  const deploymentInformer = ctx.informers.informer({ group: 'apps', version: 'v1', resource: 'deployments' })
  const replicaSetInformer = ctx.informers.informer({ group: 'apps', version: 'v1', resource: 'replicasets' })
  const podInformer = ctx.informers.informer({ group: '', version: 'v1', resource: 'pods' })
  const controllerUid = (o: KubeObject): string[] => {
    const uid = controllerOf(o)?.uid
    return uid ? [uid] : []
  }
  podInformer.addIndex(BY_CONTROLLER, controllerUid)
  const queue = new WorkQueue((key) => reconcile(key), { logger: ctx.logger, name: 'deployment' })

  const ownerOf = (rs: KubeObject): KubeObject | undefined => {
    const ref = controllerOf(rs)
    if (!ref || ref.kind !== 'Deployment') return undefined
    const d = deploymentInformer.get(rs.metadata.namespace ?? '', ref.name)
    return d?.metadata.uid === ref.uid ? d : undefined
  }
  const replicaSetChanged = (rs: KubeObject, previous?: KubeObject): void => {
    const previousOwner = previous && ownerOf(previous)
    if (previousOwner) queue.add(keyOf(previousOwner))
    const owner = ownerOf(rs)
    if (owner) return queue.add(keyOf(owner))
    if (controllerOf(rs)) return
    for (const d of deploymentInformer.list(rs.metadata.namespace ?? '')) if (selectorOf(d).matches(rs.metadata.labels)) queue.add(keyOf(d))
  }

  const stopDeployments = deploymentInformer.addHandlers({
    onAdd: (d) => queue.add(keyOf(d)),
    onUpdate: (_, d) => queue.add(keyOf(d)),
  })
  const stopReplicaSets = replicaSetInformer.addHandlers({
    onAdd: (rs) => replicaSetChanged(rs),
    onUpdate: (previous, rs) => replicaSetChanged(rs, previous),
    onDelete: (rs) => replicaSetChanged(rs),
  })
  // A Recreate rollout waits for the old pods to be gone.
  const stopPods = podInformer.addHandlers({
    onDelete: (pod) => {
      const ref = controllerOf(pod)
      const rs = ref && replicaSetInformer.get(pod.metadata.namespace ?? '', ref.name)
      const owner = rs && ownerOf(rs)
      if (owner && specOf(owner).strategy?.type === 'Recreate') queue.add(keyOf(owner))
    },
  })

  async function reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key)
    const stored = deploymentInformer.get(namespace, name)
    if (!stored) return
    const d: KubeObject = { ...structuredClone(stored), apiVersion: 'apps/v1', kind: 'Deployment' }
    const owned = await claim(replicaSetInformer.list(namespace), {
      client: ctx.client,
      resource: replicaSets,
      owner: d,
      selector: selectorOf(d),
      recheckOwner: () => ctx.client.get(deployments, namespace, name).catch(() => undefined),
    })
    const rollout = new DeploymentRollout(ctx, d, owned.map((rs) => ({ ...structuredClone(rs), apiVersion: 'apps/v1', kind: 'ReplicaSet' })))
    if (d.metadata.deletionTimestamp) {
      const { newRS, oldRSs } = await rollout.replicaSetsAndRevision(false)
      return rollout.syncStatus([...oldRSs, ...(newRS ? [newRS] : [])], newRS)
    }
    await rollout.checkPaused()
    if (specOf(d).paused || (await rollout.isScalingEvent())) await rollout.sync()
    else if (specOf(d).strategy?.type === 'Recreate') await rollout.recreate((rs) => podInformer.byIndex(BY_CONTROLLER, rs.metadata.uid ?? ''))
    else await rollout.rolling()
    if (rollout.recheckAfterMs !== undefined) queue.addAfter(key, rollout.recheckAfterMs)
  }

  return () => {
    stopDeployments()
    stopReplicaSets()
    stopPods()
    queue.stop()
  }
}
