/**
 * Where each locally served group/version sits in discovery: upstream's
 * table of group priorities (higher first) and version priorities within a
 * group, which kubectl reads through the local APIServices. Group/versions
 * the table does not know (custom resources) get upstream's CRD values.
 */

export interface ApiServicePriority {
  groupPriorityMinimum: number
  versionPriority: number
}

/** Upstream's values for a CRD group/version: low, so built-in names win. */
export const CUSTOM_RESOURCE_PRIORITY: ApiServicePriority = { groupPriorityMinimum: 1000, versionPriority: 100 }

const GROUPS: Record<string, number> = {
  '': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  autoscaling: 17500,
  batch: 17400,
  'certificates.k8s.io': 17300,
  'networking.k8s.io': 17200,
  policy: 17100,
  'rbac.authorization.k8s.io': 17000,
  'storage.k8s.io': 16800,
  'apiextensions.k8s.io': 16700,
  'admissionregistration.k8s.io': 16700,
  'scheduling.k8s.io': 16600,
  'coordination.k8s.io': 16500,
  'node.k8s.io': 16300,
  'discovery.k8s.io': 16200,
  'flowcontrol.apiserver.k8s.io': 16100,
  'internal.apiserver.k8s.io': 16000,
  'resource.k8s.io': 15900,
  'storagemigration.k8s.io': 15800,
  'apiregistration.k8s.io': 17900,
}

/** Version priorities that differ from the rule below (upstream's table). */
const VERSIONS: Record<string, number> = {
  'autoscaling/v2': 30,
  'flowcontrol.apiserver.k8s.io/v1': 21,
  'flowcontrol.apiserver.k8s.io/v1beta3': 18,
  'events.k8s.io/v1beta1': 5,
  'autoscaling/v2beta2': 1,
}

/** Upstream's habit: 15 for a stable version, 9 to 12 for a beta, 1 to 9 for an alpha. */
function versionPriority(version: string): number {
  if (/^v\d+$/.test(version)) return 15
  if (version.includes('beta')) return 9
  return 1
}

/** The priorities of a group/version the server serves itself. */
export function localPriority(group: string, version: string, custom: boolean): ApiServicePriority {
  const groupPriority = GROUPS[group]
  if (custom || groupPriority === undefined) return CUSTOM_RESOURCE_PRIORITY
  const key = group ? `${group}/${version}` : version
  return { groupPriorityMinimum: groupPriority, versionPriority: VERSIONS[key] ?? versionPriority(version) }
}
