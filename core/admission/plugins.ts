/**
 * The admission plugins by name (upstream's plugin registry): each known
 * name the server implements maps to a factory that builds the plugin from
 * what the server has (the registry to read objects through, the
 * authorizer, the webhook client, the plugin's own configuration). The
 * server builds the enabled ones, in upstream's order, into one chain.
 *
 * A plugin in a new file registers here with one line. A name that is
 * enabled but has no factory is reported by `unimplementedAdmissionPlugins`,
 * so that the daemon refuses to start rather than run without it.
 */
import { measuredPlugin } from './measured-admission.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Authorizer } from '../authz/authorizer.js'
import { ADMISSION_PLUGINS_IN_ORDER, type AdmissionPluginName, DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../config/admission-plugins.js'
import { ConfigFileError } from '../config/decode.js'
import type { WebhookClient } from '../crd/webhook-client.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { Logger } from '../logging/logger.js'
import { namespaces } from '../resources/core/namespaces.js'
import { pods } from '../resources/core/pods.js'
import { certificateApprovalFactory } from './builtin/certificate-approval.js'
import { certificateSigningFactory } from './builtin/certificate-signing.js'
import { certificateSubjectRestrictionFactory } from './builtin/certificate-subject-restriction.js'
import { clusterTrustBundleAttestFactory } from './builtin/cluster-trust-bundle-attest.js'
import { defaultIngressClassFactory } from './builtin/default-ingress-class.js'
import { defaultStorageClassFactory } from './builtin/default-storage-class.js'
import { nodeDeclaredFeatureValidatorFactory } from './builtin/node-declared-feature-validator.js'
import { nodeRestrictionFactory } from './builtin/node-restriction.js'
import { ownerReferencesPermissionEnforcementFactory } from './builtin/owner-references-permission-enforcement.js'
import { persistentVolumeClaimResizeFactory } from './builtin/persistent-volume-claim-resize.js'
import { podTopologyLabelsFactory } from './builtin/pod-topology-labels.js'
import { runtimeClassFactory } from './builtin/runtime-class.js'
import { storageObjectInUseProtectionFactory } from './builtin/storage-object-in-use-protection.js'
import { serviceAccounts } from '../resources/core/serviceaccounts.js'
import { priorityClasses } from '../resources/groups/scheduling.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { alwaysAdmit } from './builtin/always-admit.js'
import { alwaysDeny } from './builtin/always-deny.js'
import { alwaysPullImages } from './builtin/always-pull-images.js'
import { defaultTolerationSeconds } from './builtin/default-toleration-seconds.js'
import { denyServiceExternalIPs } from './builtin/deny-service-external-ips.js'
import { decodeEventRateLimitConfiguration, type EventRateLimitConfiguration, eventRateLimit } from './builtin/event-rate-limit.js'
import { extendedResourceToleration } from './builtin/extended-resource-toleration.js'
import { limitPodHardAntiAffinityTopology } from './builtin/limit-pod-hard-anti-affinity-topology.js'
import { namespaceAutoProvision } from './builtin/namespace-autoprovision.js'
import { namespaceExists } from './builtin/namespace-exists.js'
import { decodePodNodeSelectorConfiguration, type PodNodeSelectorConfiguration, podNodeSelector } from './builtin/pod-node-selector.js'
import {
  decodePodTolerationRestrictionConfiguration,
  type PodTolerationRestrictionConfiguration,
  podTolerationRestriction,
} from './builtin/pod-toleration-restriction.js'
import { priority } from './builtin/priority.js'
import { serviceAccount } from './builtin/service-account.js'
import { taintNodesByCondition } from './builtin/taint-nodes-by-condition.js'
import { type AdmissionChain, type AdmissionPlugin, admissionChain } from './chain.js'
import type { ObjectReader } from '../client/informer.js'
import { type GroupResource, withInformer } from './informer-plugin.js'
import { namespaceLifecycle } from './namespace-lifecycle.js'
import { mutatingAdmissionWebhook, validatingAdmissionWebhook } from './webhook/plugin.js'
import { decodeWebhookAdmissionConfiguration } from './webhook/webhook-admission-configuration.js'
import { decodeImagePolicySettings, imagePolicyWebhook } from './builtin/image-policy-webhook.js'
import { mutatingAdmissionPolicyPlugin, validatingAdmissionPolicyPlugin } from './policy/plugins.js'
import { limitRangerPlugin } from './builtin/limit-ranger-plugin.js'
import { podSecurityConfiguration } from './pod-security/configuration.js'
import { podSecurityPlugin } from './pod-security/plugin.js'
import { resourceQuotaConfiguration } from './quota/configuration.js'
import { type QuotaStorage, resourceQuotaPlugin } from './quota/plugin.js'
import type { ObserveStoredObjects } from '../storage/server-storage.js'
import type { RunOnce } from '../controllers/run-once.js'
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import type { StoredObjects } from '../client/stored-objects.js'
import type { Catalogue } from '../resources/catalogue.js'

/** What a plugin's factory may use. Everything is shared with the rest of the server: a plugin keeps no storage of its own. */
export interface AdmissionPluginContext {
  /** The resources served, as the catalogue has them now. */
  readonly catalogue: Catalogue
  /** Objects as stored, below the API (in-memory lookups, the writes of a plugin's in-process controller); prefer a watch-fed index to a read per request. */
  readonly stored: StoredObjects
  /** ResourceQuota's charges in the quotas' storage and its usage controller. */
  readonly quotaStorage: QuotaStorage
  /** One informer per resource, shared with the rest of the server: what a plugin reads on each request. */
  readonly informers: InformerFactory
  /** The server's own API as the loopback identity, through authorization and admission: what a plugin's controller writes with. */
  readonly client: ObjectClient
  /** The server's authorizer chain (OwnerReferencesPermissionEnforcement, PodSecurity exemptions...). */
  readonly authorizer: Authorizer
  /** How the server calls out over HTTPS, trusting a caBundle (the webhook plugins, ImagePolicyWebhook). */
  readonly webhookClient: WebhookClient
  readonly options: ApiServerOptions
  readonly logger: Logger
  readonly now: () => Date
  /** Starts a controller that must run once in a cluster (here at once, or where the controllers' lease is held). */
  readonly runOnce?: RunOnce
  /** Tells of every stored object, for a controller started at the first object it concerns (controllers/on-demand.ts); none: such controllers start at once. */
  readonly observeStoredObjects?: ObserveStoredObjects
  /** Where each plugin's calls are timed; none: not timed. */
  readonly metrics?: Metrics
  /**
   * The plugin's entry of the AdmissionConfiguration file (`--admission-control-config-file`):
   * the inline `configuration`, or the parsed content of its `path`. Undefined without one.
   */
  readonly configuration?: unknown
}

/** A built plugin, with what it needs to start (a watch's first list) and to stop (its watches, its controller). */
export interface AdmissionPluginInstance {
  readonly plugin: AdmissionPlugin
  /** Resolves when the plugin can decide (upstream's WaitForReady); the server is ready only after it. */
  readonly ready?: Promise<void>
  stop?(): void
}

export interface AdmissionPluginFactory {
  (context: AdmissionPluginContext): AdmissionPlugin | AdmissionPluginInstance
  /**
   * Decodes and checks the plugin's configuration (`raw` is undefined when
   * the AdmissionConfiguration file has none for it), throwing
   * ConfigFileError with field paths; what it returns is the factory's
   * `configuration`. Without it, the configuration is handed over as given.
   */
  decodeConfiguration?: (raw: unknown, source: string) => unknown
}

/** A factory with its configuration's decoder beside it. */
function configured<T>(
  decode: (raw: unknown, source: string) => T,
  build: (context: AdmissionPluginContext & { configuration: T }) => AdmissionPlugin | AdmissionPluginInstance,
): AdmissionPluginFactory {
  return Object.assign((context: AdmissionPluginContext) => build(context as AdmissionPluginContext & { configuration: T }), {
    decodeConfiguration: decode,
  })
}

/** A plugin reading objects through a shared informer: ready once listed, or, with `readsFor`, listed at the first of those requests. */
function reading(
  { informers }: AdmissionPluginContext,
  entry: ResourceEntry,
  build: (index: ObjectReader) => AdmissionPlugin,
  readsFor?: readonly GroupResource[],
): AdmissionPluginInstance {
  return withInformer(informers, entry, build, readsFor)
}

/** Upstream's PodNodeSelector and PodTolerationRestriction run without a configuration; EventRateLimit needs one. */
const optional =
  <T>(decode: (raw: unknown, source: string) => T, absent: T) =>
  (raw: unknown, source: string): T =>
    raw === undefined ? absent : decode(raw, source)

function required<T>(name: string, decode: (raw: unknown, source: string) => T) {
  return (raw: unknown, source: string): T => {
    if (raw === undefined) throw new ConfigFileError(source, `${name} configuration`, [`the ${name} admission plugin needs a configuration (--admission-control-config-file)`])
    return decode(raw, source)
  }
}

/** Every plugin the server implements, by the name `--enable-admission-plugins` takes. */
export const ADMISSION_PLUGIN_FACTORIES: { readonly [N in AdmissionPluginName]?: AdmissionPluginFactory } = {
  NamespaceLifecycle: ({ stored }) =>
    namespaceLifecycle((name) => stored.find(namespaces, '', name), {
      // The watch cache's copy, read-only (the plugin only looks at it).
      readCached: (name) => stored.find(namespaces, '', name, { cached: true }),
    }),
  AlwaysAdmit: ({ logger }) => alwaysAdmit(logger),
  AlwaysDeny: ({ logger }) => alwaysDeny(logger),
  NamespaceExists: (c) => reading(c, namespaces, namespaceExists),
  NamespaceAutoProvision: (c) => reading(c, namespaces, (live) => namespaceAutoProvision(c.stored, live, c.now)),
  ServiceAccount: (c) => reading(c, serviceAccounts, (live) => serviceAccount(live), [pods]),
  Priority: (c) => reading(c, priorityClasses, priority, [pods, priorityClasses]),
  DefaultTolerationSeconds: ({ options }) =>
    defaultTolerationSeconds({
      notReady: options.admission?.defaultNotReadyTolerationSeconds,
      unreachable: options.admission?.defaultUnreachableTolerationSeconds,
    }),
  AlwaysPullImages: () => alwaysPullImages,
  DenyServiceExternalIPs: () => denyServiceExternalIPs,
  TaintNodesByCondition: () => taintNodesByCondition,
  ExtendedResourceToleration: () => extendedResourceToleration,
  LimitPodHardAntiAffinityTopology: () => limitPodHardAntiAffinityTopology,
  PodNodeSelector: configured(optional<PodNodeSelectorConfiguration>(decodePodNodeSelectorConfiguration, {}), (c) =>
    reading(c, namespaces, (live) => podNodeSelector(live, c.configuration)),
  ),
  PodTolerationRestriction: configured(
    optional<PodTolerationRestrictionConfiguration>(decodePodTolerationRestrictionConfiguration, { default: [], whitelist: [] }),
    (c) => reading(c, namespaces, (live) => podTolerationRestriction(live, c.configuration)),
  ),
  EventRateLimit: configured(required<EventRateLimitConfiguration>('EventRateLimit', decodeEventRateLimitConfiguration), (c) =>
    eventRateLimit(c.configuration, c.now),
  ),
  ImagePolicyWebhook: configured(decodeImagePolicySettings, imagePolicyWebhook),
  MutatingAdmissionWebhook: configured(optional(decodeWebhookAdmissionConfiguration, undefined), mutatingAdmissionWebhook),
  ValidatingAdmissionWebhook: configured(optional(decodeWebhookAdmissionConfiguration, undefined), validatingAdmissionWebhook),
  DefaultStorageClass: defaultStorageClassFactory,
  StorageObjectInUseProtection: storageObjectInUseProtectionFactory,
  PersistentVolumeClaimResize: persistentVolumeClaimResizeFactory,
  RuntimeClass: runtimeClassFactory,
  CertificateApproval: certificateApprovalFactory,
  CertificateSigning: certificateSigningFactory,
  CertificateSubjectRestriction: certificateSubjectRestrictionFactory,
  ClusterTrustBundleAttest: clusterTrustBundleAttestFactory,
  DefaultIngressClass: defaultIngressClassFactory,
  PodTopologyLabels: podTopologyLabelsFactory,
  NodeDeclaredFeatureValidator: nodeDeclaredFeatureValidatorFactory,
  NodeRestriction: nodeRestrictionFactory,
  OwnerReferencesPermissionEnforcement: ownerReferencesPermissionEnforcementFactory,
  ValidatingAdmissionPolicy: validatingAdmissionPolicyPlugin,
  MutatingAdmissionPolicy: mutatingAdmissionPolicyPlugin,
  ResourceQuota: configured(resourceQuotaConfiguration, resourceQuotaPlugin),
  LimitRanger: limitRangerPlugin,
  PodSecurity: configured(podSecurityConfiguration, podSecurityPlugin),
}

/** The enabled names the server has no plugin for: running without them would admit what they refuse. */
export function unimplementedAdmissionPlugins(names: readonly AdmissionPluginName[]): AdmissionPluginName[] {
  return names.filter((name) => !ADMISSION_PLUGIN_FACTORIES[name])
}

/**
 * What runs when nothing is configured: the spec's default-enabled set, as
 * far as the server implements it (`unimplementedAdmissionPlugins` names the rest).
 */
export function defaultAdmissionPlugins(): AdmissionPluginName[] {
  return [...DEFAULT_ENABLED_ADMISSION_PLUGINS].filter((name) => ADMISSION_PLUGIN_FACTORIES[name])
}

export interface BuiltAdmission {
  readonly chain: AdmissionChain
  readonly ready: Promise<void>
  stop(): void
}

const isInstance = (built: AdmissionPlugin | AdmissionPluginInstance): built is AdmissionPluginInstance => 'plugin' in built

/** Where a plugin's configuration came from, for messages: its file, or its entry of the AdmissionConfiguration file. */
export type ConfigurationSource = (name: AdmissionPluginName) => string

/**
 * The enabled plugins' configurations, each decoded and checked by its
 * plugin's `decodeConfiguration` (a plugin that needs one and has none is a
 * problem too). Throws ConfigFileError for the first plugin whose
 * configuration cannot be used; `admissionConfigurationProblems` lists them all.
 */
export function decodeAdmissionConfigurations(
  names: readonly AdmissionPluginName[],
  raw: Partial<Record<AdmissionPluginName, unknown>>,
  source: ConfigurationSource = (name) => `the configuration of the ${name} admission plugin`,
): Partial<Record<AdmissionPluginName, unknown>> {
  const decoded: Partial<Record<AdmissionPluginName, unknown>> = {}
  for (const name of names) {
    const decode = ADMISSION_PLUGIN_FACTORIES[name]?.decodeConfiguration
    const value = decode ? decode(raw[name], source(name)) : raw[name]
    if (value !== undefined) decoded[name] = value
  }
  return decoded
}

/** Every problem of the enabled plugins' configurations, one message each, for start-up. */
export function admissionConfigurationProblems(
  names: readonly AdmissionPluginName[],
  raw: Partial<Record<AdmissionPluginName, unknown>>,
  source?: ConfigurationSource,
): string[] {
  return names.flatMap((name) => {
    try {
      decodeAdmissionConfigurations([name], raw, source)
      return []
    } catch (err) {
      if (err instanceof ConfigFileError) return [err.message]
      throw err
    }
  })
}

/**
 * The enabled plugins as one chain, in upstream's order whatever the order
 * of `names`. Throws for a name without a factory (see `unimplementedAdmissionPlugins`)
 * and for a configuration its plugin refuses (ConfigFileError).
 */
export function buildAdmission(
  names: readonly AdmissionPluginName[],
  context: Omit<AdmissionPluginContext, 'configuration'>,
  rawConfigurations: Partial<Record<AdmissionPluginName, unknown>> = {},
): BuiltAdmission {
  const missing = unimplementedAdmissionPlugins(names)
  if (missing.length) throw new Error(`admission plugins not implemented: ${missing.join(', ')}`)
  const configurations = decodeAdmissionConfigurations(names, rawConfigurations)
  const instances = ADMISSION_PLUGINS_IN_ORDER.filter((name) => names.includes(name)).map((name) => {
    const factory = ADMISSION_PLUGIN_FACTORIES[name] as AdmissionPluginFactory
    const configuration = configurations[name]
    const built = factory(configuration === undefined ? context : { ...context, configuration })
    return isInstance(built) ? built : { plugin: built }
  })
  return {
    chain: admissionChain(instances.map((i) => (context.metrics ? measuredPlugin(i.plugin, context.metrics) : i.plugin))),
    ready: Promise.all(instances.map((i) => i.ready)).then(() => undefined),
    stop: () => instances.forEach((i) => i.stop?.()),
  }
}
