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
 * kube-controller-manager's canonical names (1.28 on) of the controllers the
 * catalogue knows by their older names, which upstream keeps as aliases:
 * `--controllers` takes either.
 */
const CANONICAL_NAMES: Readonly<Record<string, string>> = {
  cronjob: 'cronjob-controller',
  daemonset: 'daemonset-controller',
  deployment: 'deployment-controller',
  endpoint: 'endpoints-controller',
  endpointslice: 'endpointslice-controller',
  endpointslicemirroring: 'endpointslice-mirroring-controller',
  horizontalpodautoscaling: 'horizontal-pod-autoscaler-controller',
  job: 'job-controller',
  podgc: 'pod-garbage-collector-controller',
  replicaset: 'replicaset-controller',
  replicationcontroller: 'replicationcontroller-controller',
  'root-ca-cert-publisher': 'root-ca-certificate-publisher-controller',
  statefulset: 'statefulset-controller',
  'ttl-after-finished': 'ttl-after-finished-controller',
}
const SHORT_NAMES = new Map(Object.entries(CANONICAL_NAMES).map(([short, canonical]) => [canonical, short]))

/**
 * The controllers a `--controllers` list selects, as kube-controller-manager
 * reads it: `*` is every controller on by default, `name` adds one, `-name`
 * takes one away (whatever the order), each by its canonical name or its
 * alias. A name not in the catalogue stops start-up: a controller asked for
 * and not run would leave a test waiting.
 */
export function selectControllers(selection: readonly string[], known: readonly WorkloadController[] = WORKLOAD_CONTROLLERS): WorkloadController[] {
  const byName = new Map(known.map((c) => [c.name, c]))
  const items = selection.map((item) => {
    const off = item.startsWith('-')
    const name = off ? item.slice(1) : item
    return { off, name: SHORT_NAMES.get(name) ?? name, given: name }
  })
  const problems = items.filter(({ name }) => name !== '*' && !byName.has(name)).map(({ given }) => `"${given}" is not in the list of known controllers`)
  if (problems.length) throw new Error(`--controllers: ${problems.join(', ')} (known: ${[...byName.keys()].join(', ') || 'none'})`)
  const all = items.some(({ off, name }) => !off && name === '*')
  const named = (c: WorkloadController, off: boolean) => items.some((item) => item.off === off && item.name === c.name)
  return known.filter((c) => !named(c, true) && (named(c, false) || (all && c.onByDefault)))
}
