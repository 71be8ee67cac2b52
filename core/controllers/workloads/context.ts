/**
 * What a workload controller is built from (upstream's ControllerContext in
 * kube-controller-manager): a client acting as the controller's own service
 * account, the server's shared informers, an event recorder and the clock.
 * A controller reads through informers, writes through the client and never
 * sees storage, so its writes are authorized and admitted as any client's.
 */
import type { InformerFactory } from '../../client/informer-factory.js'
import type { ObjectClient } from '../../client/object-client.js'
import type { Logger } from '../../logging/logger.js'
import type { EventRecorder } from './events.js'

export interface ControllerContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly events: EventRecorder
  readonly now: () => Date
  readonly logger: Logger
  /** The CA bundle that verifies the server (kube-controller-manager's `--root-ca-file`), when the server has one. */
  readonly rootCA?: string
}

/** A started controller: stopping it ends its handlers and its queue. */
export type StopController = () => void

export interface WorkloadController {
  /** Upstream's `--controllers` name (`replicaset`, `ttl-after-finished` ...). */
  readonly name: string
  /** The service account upstream runs it as (`system:serviceaccount:kube-system:<account>`). */
  readonly serviceAccount: string
  /** The source its events name, where upstream's differs from the account (`daemonset-controller`). @default serviceAccount */
  readonly eventComponent?: string
  /** Whether `*` turns it on (as upstream's list does, but for the horizontal pod autoscaler: without a metrics API it could only report that metrics are missing). */
  readonly onByDefault: boolean
  /** It publishes the root CA bundle: without one it does not run under `*`, and naming it stops start-up. */
  readonly needsRootCA?: boolean
  start(context: ControllerContext): StopController | Promise<StopController>
}
