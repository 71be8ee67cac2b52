/**
 * What the authenticators and authorizers are built from: the catalogue,
 * the objects they read (service accounts, RBAC objects, bootstrap-token
 * secrets) through informers or as stored, the
 * server's options, and the runtime's ports. One shape for both chains, so a
 * method or mode is added by writing its factory and naming it in the chain.
 */
import type { Metrics } from '../metrics/metrics.js'
import type { WebhookClient } from '../crd/webhook-client.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { Logger } from '../logging/logger.js'
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import type { StoredObjects } from '../client/stored-objects.js'
import type { Catalogue } from '../resources/catalogue.js'

export interface SecurityContext {
  /** The resources served, as the catalogue has them now. */
  readonly catalogue: Catalogue
  /** Objects as stored, below the API: what a lookup that cannot wait for an informer reads. */
  readonly stored: StoredObjects
  /** One informer per resource, shared with the rest of the server: what an authenticator or authorizer reads objects from. */
  readonly informers: InformerFactory
  /** The server's own API as the loopback identity, through authorization and admission. */
  readonly client: ObjectClient
  readonly options: ApiServerOptions
  readonly logger: Logger
  readonly now: () => Date
  readonly webhookClient: WebhookClient
  /** Where the authorizers count their decisions; none: not counted. */
  readonly metrics?: Metrics
}

/**
 * One built member of a chain with its life cycle: `ready` settles when it
 * can answer (an index loaded from watches, keys fetched), `stop` ends its
 * background work at shutdown.
 */
export interface Part<T> {
  readonly value: T
  readonly ready?: Promise<void>
  stop?(): void
}

/** The life cycle of several parts as one. */
export function lifeCycleOf(parts: readonly Part<unknown>[]): { ready: Promise<void>; stop(): void } {
  return {
    ready: Promise.all(parts.map((p) => p.ready)).then(() => {}),
    stop: () => {
      for (const p of parts) p.stop?.()
    },
  }
}
