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
import type { Authorizer } from '../authz/authorizer.js'
import { ADMISSION_PLUGINS_IN_ORDER, type AdmissionPluginName, DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../config/admission-plugins.js'
import type { WebhookClient } from '../crd/webhook-client.js'
import type { ApiServerOptions } from '../options/api-server-options.js'
import type { Logger } from '../ports.js'
import type { Registry } from '../registry/registry.js'
import { namespaces } from '../resources/core/namespaces.js'
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
import { type AdmissionChain, type AdmissionPlugin, admissionChain } from './chain.js'
import { namespaceLifecycle } from './namespace-lifecycle.js'
import { defaultTolerationSecondsAdmission, priorityAdmission, serviceAccountAdmission } from './pod-defaults.js'
import { mutatingAdmissionWebhook, validatingAdmissionWebhook } from './webhook/plugin.js'
import { imagePolicyWebhookFactory } from './builtin/image-policy-webhook.js'
import { mutatingAdmissionPolicyPlugin, validatingAdmissionPolicyPlugin } from './policy/plugins.js'
import { limitRangerPlugin } from './builtin/limit-ranger-plugin.js'
import { podSecurityPlugin } from './pod-security/plugin.js'
import { resourceQuotaPlugin } from './quota/plugin.js'

/** What a plugin's factory may use. Everything is shared with the rest of the server: a plugin keeps no storage of its own. */
export interface AdmissionPluginContext {
  /** Reads (and, for plugins with an in-process controller, writes) objects; prefer a watch-fed index to a read per request. */
  readonly registry: Registry
  /** The server's authorizer chain (OwnerReferencesPermissionEnforcement, PodSecurity exemptions...). */
  readonly authorizer: Authorizer
  /** How the server calls out over HTTPS, trusting a caBundle (the webhook plugins, ImagePolicyWebhook). */
  readonly webhookClient: WebhookClient
  readonly options: ApiServerOptions
  readonly logger: Logger
  readonly now: () => Date
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

export type AdmissionPluginFactory = (context: AdmissionPluginContext) => AdmissionPlugin | AdmissionPluginInstance

/** Every plugin the server implements, by the name `--enable-admission-plugins` takes. */
export const ADMISSION_PLUGIN_FACTORIES: { readonly [N in AdmissionPluginName]?: AdmissionPluginFactory } = {
  NamespaceLifecycle: ({ registry }) => {
    const store = () => registry.store(namespaces)
    return namespaceLifecycle((name) => store().storage.get(store().key('', name)))
  },
  ServiceAccount: () => serviceAccountAdmission,
  Priority: () => priorityAdmission,
  DefaultTolerationSeconds: () => defaultTolerationSecondsAdmission,
  ImagePolicyWebhook: imagePolicyWebhookFactory,
  MutatingAdmissionWebhook: mutatingAdmissionWebhook,
  ValidatingAdmissionWebhook: validatingAdmissionWebhook,
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
  ResourceQuota: resourceQuotaPlugin,
  LimitRanger: limitRangerPlugin,
  PodSecurity: podSecurityPlugin,
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

/**
 * The enabled plugins as one chain, in upstream's order whatever the order
 * of `names`. Throws for a name without a factory (see `unimplementedAdmissionPlugins`).
 */
export function buildAdmission(
  names: readonly AdmissionPluginName[],
  context: Omit<AdmissionPluginContext, 'configuration'>,
  configurations: Partial<Record<AdmissionPluginName, unknown>> = {},
): BuiltAdmission {
  const missing = unimplementedAdmissionPlugins(names)
  if (missing.length) throw new Error(`admission plugins not implemented: ${missing.join(', ')}`)
  const instances = ADMISSION_PLUGINS_IN_ORDER.filter((name) => names.includes(name)).map((name) => {
    const factory = ADMISSION_PLUGIN_FACTORIES[name] as AdmissionPluginFactory
    const configuration = configurations[name]
    const built = factory(configuration === undefined ? context : { ...context, configuration })
    return isInstance(built) ? built : { plugin: built }
  })
  return {
    chain: admissionChain(instances.map((i) => i.plugin)),
    ready: Promise.all(instances.map((i) => i.ready)).then(() => undefined),
    stop: () => instances.forEach((i) => i.stop?.()),
  }
}
