/**
 * Options of `createApiServer`: the embedder's view of the flags. The daemon
 * fills them from its command line (runtimes/node); tests set them directly.
 */
import type { AuthorizerSpec, LegacyWebhookOptions } from '../authz/authorizer-specs.js'
import type { AbacPolicy } from '../config/abac-policy.js'
import type { UserInfo } from '../resources/object.js'
import type { ServingOptions } from './serving-options.js'

/** One line of a `--token-auth-file`: `token,user,uid,"group1,group2"`. */
export interface StaticToken {
  token: string
  user: UserInfo
}

export interface AuthenticationOptions {
  /**
   * Accept client certificates that the transport verified against the
   * client CA (`--client-ca-file`): CN is the user, O the groups.
   * @default true
   */
  clientCertificates?: boolean
  /** Bearer tokens from `--token-auth-file`. @default [] */
  tokens?: StaticToken[]
  /**
   * Requests with no credential run as `system:anonymous` (`--anonymous-auth`).
   * As upstream, this is forced off while authorization is AlwaysAllow.
   * @default true
   */
  anonymous?: boolean
}

export interface ApiServerOptions {
  authentication?: AuthenticationOptions
  /**
   * Authorization modes in order (`--authorization-mode`): AlwaysAllow,
   * AlwaysDeny, ABAC (needs `authorizationPolicy`), Node, Webhook (needs
   * `authorizationWebhook`); createApiServer throws for a mode it does not
   * implement rather than serve without it. Ignored when
   * `authorizationConfiguration` is given.
   * @default ['AlwaysAllow']
   */
  authorizationModes?: string[]
  /**
   * The rules of the ABAC mode (`--authorization-policy-file`), as
   * `loadAbacPolicy` in core/config/abac-policy.ts reads them.
   */
  authorizationPolicy?: AbacPolicy[]
  /**
   * The Webhook mode of `authorizationModes` (`--authorization-webhook-config-file`
   * and the `--authorization-webhook-*` flags): where it is, the
   * SubjectAccessReview version, and how long answers are cached.
   * @see webhookAuthorizer in core/authz/webhook.ts
   */
  authorizationWebhook?: LegacyWebhookOptions
  /**
   * The authorizer chain of an AuthorizationConfiguration
   * (`--authorization-config`); replaces `authorizationModes`. Build it with
   * `configuredAuthorizerSpecs` (core/authz/authorizer-specs.ts) from a
   * loaded file, and swap it at run time with `ApiServer.reloadAuthorization`.
   */
  authorizationConfiguration?: AuthorizerSpec[]
  /**
   * The identity of requests handed to `fetch` with no connection info (an
   * embedding program calling the handler directly), unless the request
   * carries its own credential. `null` makes them anonymous.
   * @default { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] }
   */
  embeddedIdentity?: UserInfo | null
  /**
   * The version `/version` reports (`--version=vX.Y.Z`).
   * @default 'v1.32.0'
   */
  version?: string
  /** Default deadline of non-long-running requests (`--request-timeout`), in ms. @default 60000 */
  requestTimeoutMs?: number
  /** Watches end at a random time in [min, 2*min] seconds (`--min-request-timeout`). @default 1800 */
  minRequestTimeoutSeconds?: number
  /** In-flight limits, shutdown, HSTS, CORS, profiling. @see ServingOptions */
  serving?: ServingOptions
  /** Largest accepted request body in bytes. @default 3145728 (upstream's 3 MiB) */
  maxRequestBodyBytes?: number
  /** How often watches that asked for bookmarks receive one, in ms. @default 60000 */
  bookmarkIntervalMs?: number
  /** Create `default`, `kube-system`, `kube-public` and `kube-node-lease` at start. @default true */
  bootstrapNamespaces?: boolean
  /**
   * Create the `system-node-critical` and `system-cluster-critical`
   * PriorityClasses at start when missing (upstream's
   * `scheduling/bootstrap-system-priority-classes` post-start hook); existing
   * ones are left as they are. Nothing is created while scheduling.k8s.io/v1 is not served.
   * @default true
   * @see systemPriorityClassesHook in core/controllers/system-priority-classes.ts
   */
  bootstrapPriorityClasses?: boolean
  /**
   * Put the watch cache in front of the storage (`--watch-cache`): one
   * storage watch per resource fans out to every client watch, and
   * `resourceVersion=0` lists and watches are served without touching storage.
   * @default true
   * @see WatchCache in core/storage/watch-cache.ts
   */
  watchCache?: boolean
  /**
   * Per-resource settings from `--watch-cache-sizes`, keyed `resource` for the
   * core group and `resource.group` otherwise (`parseWatchCacheSizes` reads the
   * flag's `resource[.group]#size` values). As upstream, only 0 means
   * something: that resource is not cached; any other size leaves it cached.
   * @default {}
   */
  watchCacheSizes?: Record<string, number>
  /**
   * Live events a client watch served by the watch cache may have waiting
   * for its client; one that falls further behind is ended (its client
   * re-lists, as against upstream) and counted in
   * `apiserver_terminated_watchers_total`.
   * @default 1000
   * @see WatchCacheOptions in core/storage/watch-cache.ts
   */
  watcherBufferSize?: number
  /**
   * Where every key starts in the storage (`--kvstore-prefix`): objects live
   * at `<prefix>/<resource>/<namespace>/<name>`, as upstream lays them out.
   * @default '/registry'
   */
  storagePrefix?: string
  /**
   * How often the objects of each resource are counted for the
   * `apiserver_storage_objects` metric at `/metrics`
   * (`--kvstore-count-metric-poll-period`); 0 disables the count.
   * @default 60000
   */
  storageObjectCountPollMs?: number
  /**
   * Which built-in APIs are served (`--runtime-config`), keyed as upstream:
   * `api/all`, `api/ga`, `api/beta`, `api/alpha`, `<group>/<version>`,
   * `<group>/<version>/<resource>`, and `v1` (or `api/v1`) for the core
   * group; `true` serves, `false` does not. Every built-in group/version is
   * served by default. A key upstream refuses, or one that disables core v1,
   * stops start-up with a RuntimeConfigError naming it.
   * @default {}
   * @see applyRuntimeConfig in core/resources/runtime-config.ts
   */
  runtimeConfig?: Record<string, boolean>
  /**
   * Pod specs may ask for privileged containers (`--allow-privileged`);
   * otherwise `securityContext.privileged: true` is refused as
   * `Forbidden: disallowed by cluster policy`.
   * @default false
   */
  allowPrivileged?: boolean
  /**
   * The cluster IP ranges of Services (`--service-cluster-ip-range`): one
   * CIDR, or an IPv4 and an IPv6 one for dual stack, the primary first. The
   * first address of the primary range is the `kubernetes` Service's.
   * @default ['10.0.0.0/24']
   */
  serviceClusterIPRange?: string[]
  /** The node ports of NodePort and LoadBalancer Services (`--service-node-port-range`). @default { first: 30000, last: 32767 } */
  serviceNodePortRange?: { first: number; last: number }
  /** The address behind the `kubernetes` Service (`--advertise-address`). @default '127.0.0.1' */
  advertiseAddress?: string
  /**
   * The port the server is reached at (`--secure-port`), the target of the
   * `kubernetes` Service. Unset (a port chosen at listen time): the service
   * and its endpoints wait for `ApiServer.setSecurePort`.
   */
  securePort?: number
  /** Not 0: the `kubernetes` Service is a NodePort service on this port (`--platform-service-node-port`). @default 0 */
  platformServiceNodePort?: number
  /** `--endpoint-reconciler-type`: `none` leaves the `kubernetes` endpoints unmanaged. @default 'lease' */
  endpointReconcilerType?: 'lease' | 'master-count' | 'none'
  /** Keep the `kubernetes` Service and its endpoints in `default`. @default true */
  kubernetesServiceController?: boolean
  /** Give every namespace its `default` ServiceAccount. @default true */
  serviceAccountsController?: boolean
  /**
   * Run the garbage collector (`--enable-garbage-collector`): objects whose
   * owners (metadata.ownerReferences) are gone are deleted, and the `orphan`
   * and `foregroundDeletion` finalizers that a delete's propagationPolicy sets
   * are acted on. Off, those finalizers hold their objects until removed by hand.
   * @default true
   * @see startGarbageCollector in core/controllers/garbage-collector.ts
   */
  garbageCollector?: boolean
  /**
   * How many objects a DELETE of a collection (and the clean-up of a deleted
   * namespace) deletes in parallel (`--delete-collection-workers`).
   * @default 1
   */
  deleteCollectionWorkers?: number
}

export const ADMIN_IDENTITY: UserInfo = {
  username: 'system:admin',
  groups: ['system:masters', 'system:authenticated'],
}
