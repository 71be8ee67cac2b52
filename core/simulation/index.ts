/**
 * A cluster without kubelets, in process (`createApiServer({ nodes })`,
 * `--simulated-nodes`): simulated nodes that stay Ready, a scheduler that
 * binds pending pods to them, and a kubelet that drives the bound pods
 * through their phases. With the workload controllers, a Deployment rolls
 * out and a Job completes as on a real cluster.
 */
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import { clientEventRecorder } from '../controllers/workloads/events.js'
import type { Logger } from '../logging/logger.js'
import { namespaces } from '../resources/core/namespaces.js'
import { startKubelet } from './kubelet.js'
import { registerNodes, type SimulatedNodesOptions } from './nodes.js'
import { SCHEDULER_IDENTITY, startScheduler } from './scheduler.js'

export type { SimulatedNodesOptions } from './nodes.js'
export { EXIT_CODE_ANNOTATION } from './kubelet.js'

export interface SimulationContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly now: () => Date
  readonly logger: Logger
  /** Whether the Node authorizer decides what nodes may do: then each node writes as itself. */
  readonly nodeAuthorizer: boolean
  /** What the nodes report as their kubelet's version: the server's own, as a cluster's kubelets are kept no newer than it. */
  readonly kubeletVersion: string
}

/** Resolves once the namespace is in the informer. */
async function namespaceExists(informers: InformerFactory, name: string): Promise<void> {
  const informer = informers.informer(namespaces)
  await informer.synced
  if (informer.get('', name)) return
  await new Promise<void>((resolve) => {
    const stop = informer.onChange(() => {
      if (!informer.get('', name)) return
      stop()
      resolve()
    })
  })
}

/** `nodes: 3` as the options it stands for. */
export function simulatedNodesOptions(nodes: number | SimulatedNodesOptions): SimulatedNodesOptions {
  const options = typeof nodes === 'number' ? { count: nodes } : nodes
  if (!Number.isInteger(options.count) || options.count < 0) throw new Error(`nodes: the count must be a whole number of at least 0, not ${options.count}`)
  return options
}

/** Registers the nodes, then starts the scheduler and the kubelet; resolves to what stops them. */
export async function startSimulation(context: SimulationContext, options: SimulatedNodesOptions): Promise<() => void> {
  const { client, informers, now, logger, nodeAuthorizer, kubeletVersion } = context
  // The node leases live in kube-node-lease, which the server creates at start.
  await namespaceExists(informers, 'kube-node-lease')
  const stopLeases = await registerNodes(client, options, nodeAuthorizer, now, logger, kubeletVersion)
  const events = clientEventRecorder(client.as(SCHEDULER_IDENTITY, 'kube-scheduler'), 'default-scheduler', now, logger)
  const stopKubelet = await startKubelet({ client, informers, options, asItself: nodeAuthorizer, now, logger })
  const stopScheduler = await startScheduler({ client, informers, events, now, logger })
  return () => {
    stopLeases()
    stopKubelet()
    stopScheduler()
  }
}
