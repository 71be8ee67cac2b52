/**
 * The admission plugins the server knows by name (spec: Admission flags),
 * as data: `--enable-admission-plugins`, `--disable-admission-plugins`,
 * `--admission-control` and the AdmissionConfiguration file check names
 * against it.
 */

/**
 * Every known plugin, in the order upstream runs them (its AllOrderedPlugins,
 * limited to the spec's names): the order in the flags is irrelevant, this
 * one decides. Webhooks, policies, ResourceQuota and AlwaysDeny come last.
 */
export const ADMISSION_PLUGINS_IN_ORDER = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'NodeDeclaredFeatureValidator',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const

export type AdmissionPluginName = (typeof ADMISSION_PLUGINS_IN_ORDER)[number]

/** The known names sorted, as upstream lists them in messages and `--help`. */
export const ADMISSION_PLUGIN_NAMES: readonly AdmissionPluginName[] = [...ADMISSION_PLUGINS_IN_ORDER].sort()

/** Plugins on unless `--disable-admission-plugins` names them (spec: Default-enabled set). */
export const DEFAULT_ENABLED_ADMISSION_PLUGINS: ReadonlySet<AdmissionPluginName> = new Set<AdmissionPluginName>([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'TaintNodesByCondition',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodTopologyLabels',
  'NodeDeclaredFeatureValidator',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
])

export function isAdmissionPluginName(name: string): name is AdmissionPluginName {
  return (ADMISSION_PLUGINS_IN_ORDER as readonly string[]).includes(name)
}

/**
 * The plugins that run, in upstream's order, for `--enable-admission-plugins`
 * and `--disable-admission-plugins`: the default set, plus the enabled ones,
 * minus the disabled ones. Naming a plugin in both lists is an error the flag
 * validation reports (upstream: `"X" can not be both enabled and disabled`).
 */
export function enabledAdmissionPlugins(enable: readonly string[], disable: readonly string[]): AdmissionPluginName[] {
  return ADMISSION_PLUGINS_IN_ORDER.filter(
    (name) => enable.includes(name) || (DEFAULT_ENABLED_ADMISSION_PLUGINS.has(name) && !disable.includes(name)),
  )
}
