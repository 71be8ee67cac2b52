/**
 * Options of `createApiServer`: the embedder's view of the flags. The daemon
 * fills them from its command line (apply-flags.ts, then what runtimes/node
 * loads from files); tests set them directly.
 */
import type { SimulatedNodesOptions } from '../simulation/nodes.js'
import type { EmulationOptions } from '../resources/emulation.js'
import type { NodeAgentOptions } from '../nodeagent/connection.js'
import type { AuthorizerSpec, LegacyWebhookOptions } from '../authz/authorizer-specs.js'
import type { AbacPolicy } from '../config/abac-policy.js'
import type { AuthenticationOptions } from '../authn/authentication-options.js'
import type { UserInfo } from '../machinery/object.js'
import type { MetricsFilterOptions } from '../metrics/filters.js'
import type { ServingOptions } from './serving-options.js'
import type { DroppedEvents } from '../audit/batch.js'
import type { AuditBackend, AuditPolicy } from '../audit/types.js'
import type { AdmissionPluginName } from '../config/admission-plugins.js'
import type { AggregationOptions } from '../aggregator/aggregator.js'
import type { EncryptionConfiguration } from '../config/encryption.js'
import type { MultiServerOptions } from '../controllers/multi-server-options.js'
import type { RecordOptions } from '../embedding/activity.js'
import type { SeedObjects } from '../embedding/seed.js'

/** Auditing (`--audit-policy-file` and a backend): which requests are recorded, at which level, and where to. */
export interface AuditOptions {
  policy: AuditPolicy
  /**
   * The log file, the webhook, or both; each may batch and truncate
   * (core/audit/batch.ts, truncate.ts). As a function, it is handed the
   * server's report of lost events (`apiserver_audit_error_total` and a log
   * line) for the batching and truncating wrappers to call.
   */
  backends: AuditBackend[] | ((dropped: DroppedEvents) => AuditBackend[])
}

/** The admission chain (`--enable-admission-plugins`, `--disable-admission-plugins`, `--admission-control-config-file`). */
export interface AdmissionOptions {
  /**
   * The plugins that run; the server orders them as upstream does. A name the
   * server does not implement makes createApiServer throw.
   * @default the spec's default-enabled set, as far as the server implements it
   * @see enabledAdmissionPlugins in core/config/admission-plugins.ts
   */
  plugins?: AdmissionPluginName[]
  /** Each plugin's configuration: the inline `configuration` of its AdmissionConfiguration entry, or its `path` file parsed. */
  configurations?: Partial<Record<AdmissionPluginName, unknown>>
  /**
   * The MutatingAdmissionPolicy feature gate: alpha and off at 1.32, so the
   * plugin of that name, though enabled by default, mutates nothing unless it is on.
   * @default false
   */
  mutatingAdmissionPolicy?: boolean
  /**
   * The ServiceAccountNodeAudienceRestriction feature gate: beta and off at
   * 1.32, on from 1.33. On, NodeRestriction lets a kubelet request a token only
   * for an audience its pod's volumes use or the authorizer grants it.
   * @default false
   */
  serviceAccountNodeAudienceRestriction?: boolean
  /** tolerationSeconds of the `not-ready:NoExecute` toleration DefaultTolerationSeconds adds (`--default-not-ready-toleration-seconds`). @default 300 */
  defaultNotReadyTolerationSeconds?: number
  /** The same for `unreachable:NoExecute` (`--default-unreachable-toleration-seconds`). @default 300 */
  defaultUnreachableTolerationSeconds?: number
}

export interface ApiServerOptions {
  /** Admission plugins and their configuration. @see AdmissionOptions */
  admission?: AdmissionOptions
  /**
   * API aggregation (APIServices): local APIServices kept for every served
   * group/version, aggregated ones probed and proxied to through
   * `ServerPorts.proxyTransport`. @default off for embedders; the daemon turns it on
   * @see AggregationOptions
   */
  aggregation?: AggregationOptions
  /**
   * Reaching node agents (`--nodeagent-*`) for pods/log, exec, attach,
   * port-forward and nodes/proxy, and the cluster network for pods/proxy and
   * services/proxy, through `ServerPorts.proxyTransport` (upgrades through the
   * runtime's ConnectionInfo.passUpgrade). @default off for embedders; the daemon turns it on
   */
  nodeAgent?: NodeAgentOptions
  /** Record requests as the audit policy says. @default no auditing (every answer still carries an Audit-ID) */
  audit?: AuditOptions
  authentication?: AuthenticationOptions
  /**
   * Authorization modes in order (`--authorization-mode`): AlwaysAllow,
   * AlwaysDeny, ABAC (needs `authorizationPolicy`), Node, RBAC, Webhook (needs
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
   * carries its own credential. An embedder opts in, usually with
   * `ADMIN_IDENTITY`; by default such a request is authenticated as any
   * other, so a runtime adapter that forgets the connection info gets an
   * anonymous request (or a 401), never an administrator.
   * @default null
   * @see ADMIN_IDENTITY
   */
  embeddedIdentity?: UserInfo | null
  /**
   * Objects the server starts with (embedding, docs/embedding.md, "Embedding in tests"):
   * values, or YAML/JSON text of one or more documents. They are created
   * through the API as the administrator, CustomResourceDefinitions first
   * (served before their custom resources are created), then namespaces,
   * then the rest in the order given; all exist when `ready` resolves, and
   * `reset()` returns to them. A refused object fails `ready`, naming it.
   */
  objects?: SeedObjects
  /**
   * Begin from what an earlier server with the same options stored at
   * start-up in this process, instead of writing it again: the second and
   * later servers of a test suite start several times faster. Such servers
   * share the uids and creation times of what start-up made. Never used with
   * the embedder's storage or clock, several servers, controllers or
   * simulated nodes.
   * @default true
   * @see beginFromTemplate in core/embedding/startup-template.ts
   */
  reuseStartup?: boolean
  /**
   * Record requests and storage changes for a test to assert on
   * (`ApiServer.activity`, docs/embedding.md, "Embedding in tests"): `true`, or
   * `{ limit }` entries kept per list (the oldest dropped). Recording starts
   * when `ready` resolves; `reset()` clears it.
   * @default false
   * @see ActivityLog
   */
  record?: RecordOptions
  /**
   * The version `/version` reports (`--version=vX.Y.Z`).
   * @default 'v1.32.0'
   */
  version?: string
  /**
   * `--emulated-version` and its companions: the built-in APIs served are
   * those of the emulated release (core/resources/emulation.ts) and
   * `/version` adds the emulation and minimum compatibility versions.
   * @default none: the server's own release
   */
  emulation?: EmulationOptions
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
   * Create upstream's mandatory and suggested FlowSchemas and
   * PriorityLevelConfigurations at start (the
   * `priority-and-fairness-config-producer` post-start hook) while priority
   * and fairness is on. Without them the mandatory `exempt` and `catch-all`
   * apply from memory.
   * @default true
   * @see flowControlBootstrapHook in core/flowcontrol/bootstrap.ts
   */
  bootstrapFlowControl?: boolean
  /**
   * Create and reconcile upstream's default RBAC policy at start (upstream's
   * `rbac/bootstrap-roles` post-start hook): `cluster-admin`, `admin`,
   * `edit`, `view`, every `system:` role and binding. Missing objects are
   * created; stored ones annotated `rbac.authorization.kubernetes.io/autoupdate: "true"`
   * get missing rules and subjects added, never removed; `"false"` leaves
   * them alone. Nothing is created while rbac.authorization.k8s.io/v1 is not served.
   * The daemon always creates it, as upstream; an embedded server by default
   * only when RBAC is one of its authorizers, since the ~120 writes would
   * otherwise multiply its start-up time for nothing.
   * @default true when RBAC authorizes, else false
   * @see rbacBootstrapHook in core/controllers/rbac-bootstrap-roles.ts
   */
  bootstrapRbacPolicy?: boolean
  /**
   * Fill ClusterRoles that have an `aggregationRule` with the rules of the
   * ClusterRoles their selectors pick, and keep them current (upstream's
   * clusterrole-aggregation controller, run in-process).
   * @default true
   * @see startClusterRoleAggregation in core/controllers/clusterrole-aggregation.ts
   */
  clusterRoleAggregation?: boolean
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
   * `--encryption-provider-config`: which resources are stored encrypted,
   * with which providers (spec: EncryptionConfiguration). With the default
   * in-memory store the server builds its transformers; a given storage
   * must come with `ports.valueTransformers` built from the same file.
   * @default nothing encrypted
   */
  encryption?: EncryptionConfiguration
  /**
   * How often the objects of each resource are counted for the
   * `apiserver_storage_objects` metric at `/metrics`
   * (`--kvstore-count-metric-poll-period`); 0 disables the count.
   * @default 60000
   */
  storageObjectCountPollMs?: number
  /**
   * How often each storage cluster's database size is asked for the
   * `apiserver_storage_size_bytes` metric (`--kvstore-db-metric-poll-interval`);
   * 0 disables it. Needs `ports.storageSizes`.
   * @default 30000
   */
  storageSizePollMs?: number
  /**
   * What `/metrics` shows (`--disabled-metrics`, `--allow-metric-labels`
   * and its manifest, `--show-hidden-metrics-for-version`).
   * @default every metric, every label value
   */
  metrics?: MetricsFilterOptions
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
   * The host name in the addresses the server gives out for itself
   * (`--external-hostname`): `serverAddressByClientCIDRs` of `/api` and the
   * key set URI of service-account issuer discovery, with the secure port.
   * @default the advertise address; `/api` without either names the host the client asked for
   */
  externalHostname?: string
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
  /**
   * One server among several on a shared store: identity lease, leader
   * election of the run-once controllers, every live server in the
   * `kubernetes` endpoints. Absent: no leases, controllers run at once.
   * @see MultiServerOptions
   */
  multiServer?: MultiServerOptions
  /**
   * `--event-ttl` on a backend that does not expire keys itself (memory,
   * the embedded store): an event is deleted this long after its last write,
   * and watchers see it DELETED. Leave it unset over etcd, whose leases do it.
   * @default undefined (events are kept)
   */
  eventTtlMs?: number
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
   * Workload controllers to run in process (`--controllers`), by upstream's
   * kube-controller-manager names: `*` for every one on by default,
   * `name` to add one, `-name` to leave one out. An unknown name stops
   * start-up. Each runs once across servers sharing a store, as its own
   * service account.
   * @default none: a kube-apiserver runs no workload controllers
   * @see WORKLOAD_CONTROLLERS in core/controllers/workloads/catalogue.ts
   */
  controllers?: readonly string[]
  /**
   * The CA bundle (PEM) that verifies this server's serving certificate,
   * which the `root-ca-cert-publisher` controller publishes as `ca.crt` of
   * the ConfigMap `kube-root-ca.crt` in every namespace (kube-controller-manager's
   * `--root-ca-file`). The daemon gives the CA of its serving certificate.
   * Absent: that controller does not run under `*`, and naming it stops start-up.
   * @default none
   */
  rootCA?: string
  /**
   * Simulated nodes (`--simulated-nodes`), as kwok makes them: Node objects
   * that stay Ready, a scheduler binding pending pods to them, and a kubelet
   * driving the bound pods through their phases. A number is the count.
   * @default none
   * @see docs/controllers.md, "Simulated nodes"
   */
  nodes?: number | SimulatedNodesOptions
  /**
   * How many objects a DELETE of a collection (and the clean-up of a deleted
   * namespace) deletes in parallel (`--delete-collection-workers`).
   * @default 1
   */
  deleteCollectionWorkers?: number
}
