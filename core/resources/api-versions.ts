/**
 * Facts about the built-in API group/versions that `--runtime-config` may
 * name: the groups kube-apiserver serves, and the minor release (of 1.x)
 * that introduced the recent group/versions an emulated version may
 * predate. Versions introduced before 1.26 are left out: no emulation
 * window of a supported server reaches back that far.
 */

export const API_GROUPS: ReadonlySet<string> = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
])

export const INTRODUCED_IN_MINOR: Readonly<Record<string, number>> = {
  'admissionregistration.k8s.io/v1alpha1': 26,
  'admissionregistration.k8s.io/v1beta1': 28,
  'certificates.k8s.io/v1alpha1': 26,
  'certificates.k8s.io/v1beta1': 33,
  'coordination.k8s.io/v1alpha1': 31,
  'coordination.k8s.io/v1alpha2': 32,
  'coordination.k8s.io/v1beta1': 33,
  'flowcontrol.apiserver.k8s.io/v1beta3': 26,
  'flowcontrol.apiserver.k8s.io/v1': 29,
  'networking.k8s.io/v1alpha1': 27,
  'networking.k8s.io/v1beta1': 31,
  'resource.k8s.io/v1alpha3': 31,
  'resource.k8s.io/v1beta1': 32,
  'resource.k8s.io/v1beta2': 33,
  'resource.k8s.io/v1': 34,
  'storagemigration.k8s.io/v1alpha1': 30,
}

/**
 * The minor release (of 1.x) that introduced each built-in resource the
 * server serves in a version newer than its group/version: the GA versions
 * of APIs that went GA in a recent release. Under an older
 * `--emulated-version` they are not served.
 */
export const RESOURCE_INTRODUCED_IN_MINOR: Readonly<Record<string, number>> = {
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': 29,
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': 29,
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': 30,
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': 30,
  'networking.k8s.io/v1/ipaddresses': 33,
  'networking.k8s.io/v1/servicecidrs': 33,
  'storage.k8s.io/v1/volumeattributesclasses': 34,
  'resource.k8s.io/v1/deviceclasses': 34,
  'resource.k8s.io/v1/resourceclaims': 34,
  'resource.k8s.io/v1/resourceclaimtemplates': 34,
  'resource.k8s.io/v1/resourceslices': 34,
  'admissionregistration.k8s.io/v1/mutatingadmissionpolicies': 36,
  'admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings': 36,
}

/** The release that introduced a group/version (`<group>/<version>`) or resource (`<group>/<version>/<resource>`), when recent. */
export function introducedInMinor(group: string, version: string, resource?: string): number | undefined {
  const gv = `${group}/${version}`
  const own = resource === undefined ? undefined : RESOURCE_INTRODUCED_IN_MINOR[`${gv}/${resource}`]
  return own ?? INTRODUCED_IN_MINOR[gv]
}

/** `--runtime-config` keys that name sets of versions rather than one group/version. */
export const VERSION_SET_KEYS: ReadonlySet<string> = new Set(['api/all', 'api/ga', 'api/beta', 'api/alpha', 'api/legacy'])

/** The group/version a `--runtime-config` key names (`apps/v1`, `apps/v1/deployments`, `v1`), or undefined. */
export function runtimeConfigGroupVersion(key: string): { group: string; version: string; resource?: string } | undefined {
  // As upstream, the core group may be written v1, api/v1 or /v1 (and with a resource after it).
  const normalized = /^(api\/)?v1(\/|$)/.test(key) ? `/v1${key.replace(/^(api\/)?v1/, '')}` : key
  const parts = normalized.split('/')
  if (parts.length !== 2 && parts.length !== 3) return undefined
  const [group = '', version = '', resource] = parts
  if (version === '' || group.includes(' ')) return undefined
  return { group, version, ...(resource !== undefined ? { resource } : {}) }
}
