/**
 * The workload controllers this server can run in process (off unless
 * asked for: a kube-apiserver runs none), by upstream's
 * kube-controller-manager names, and the `--controllers` selection over them.
 */
import type { WorkloadController } from './context.js'
import { cronJobController } from './cronjob.js'
import { daemonSetController } from './daemonset.js'
import { deploymentController } from './deployment.js'
import { endpointController } from './endpoints.js'
import { endpointSliceMirroringController } from './endpointslice-mirroring.js'
import { endpointSliceController } from './endpointslices.js'
import { horizontalPodAutoscalerController } from './hpa.js'
import { jobController } from './job.js'
import { podGcController } from './podgc.js'
import { replicaSetController } from './replicaset.js'
import { replicationControllerController } from './replicationcontroller.js'
import { rootCaPublisherController } from './root-ca-publisher.js'
import { statefulSetController } from './statefulset.js'
import { ttlAfterFinishedController } from './ttl-after-finished.js'

export const WORKLOAD_CONTROLLERS: readonly WorkloadController[] = [
  cronJobController,
  daemonSetController,
  deploymentController,
  endpointController,
  endpointSliceController,
  endpointSliceMirroringController,
  horizontalPodAutoscalerController,
  jobController,
  podGcController,
  replicaSetController,
  replicationControllerController,
  rootCaPublisherController,
  statefulSetController,
  ttlAfterFinishedController,
]

/**
 * The controllers a `--controllers` list selects, as kube-controller-manager
 * reads it: `*` is every controller on by default, `name` adds one, `-name`
 * takes one away (whatever the order). A name not in the catalogue stops
 * start-up: a controller asked for and not run would leave a test waiting.
 */
export function selectControllers(selection: readonly string[], known: readonly WorkloadController[] = WORKLOAD_CONTROLLERS): WorkloadController[] {
  const byName = new Map(known.map((c) => [c.name, c]))
  const problems = selection
    .map((item) => item.replace(/^-/, ''))
    .filter((name) => name !== '*' && !byName.has(name))
    .map((name) => `"${name}" is not in the list of known controllers`)
  if (problems.length) throw new Error(`--controllers: ${problems.join(', ')} (known: ${[...byName.keys()].join(', ') || 'none'})`)
  const all = selection.includes('*')
  return known.filter((c) => !selection.includes(`-${c.name}`) && (selection.includes(c.name) || (all && c.onByDefault)))
}
