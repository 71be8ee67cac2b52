/**
 * Which Node labels a kubelet may set on its own Node (upstream:
 * k8s.io/kubelet/pkg/apis IsKubeletLabel and NodeRestriction's
 * getForbiddenLabels): nothing under `node-restriction.kubernetes.io`, and
 * under `kubernetes.io` and `k8s.io` only the well-known labels a kubelet
 * registers with, and the `kubelet.kubernetes.io` and `node.kubernetes.io` prefixes.
 */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'node.kubernetes.io/windows-build',
])
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io']
const NODE_RESTRICTION_NAMESPACE = 'node-restriction.kubernetes.io'

const prefixOf = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '')
const within = (prefix: string, domain: string): boolean => prefix === domain || prefix.endsWith(`.${domain}`)

export function isKubeletLabel(key: string): boolean {
  return KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((domain) => within(prefixOf(key), domain))
}

/** The keys added, removed or changed between two label maps. */
export function modifiedLabels(next: Record<string, string> = {}, previous: Record<string, string> = {}): string[] {
  const keys = new Set([...Object.keys(next), ...Object.keys(previous)])
  return [...keys].filter((k) => next[k] !== previous[k])
}

/** Of the modified keys, those a kubelet may not touch, sorted as upstream lists them. */
export function forbiddenNodeLabels(modified: readonly string[]): string[] {
  return modified
    .filter((key) => {
      const prefix = prefixOf(key)
      if (within(prefix, NODE_RESTRICTION_NAMESPACE)) return true
      return (within(prefix, 'kubernetes.io') || within(prefix, 'k8s.io')) && !isKubeletLabel(key)
    })
    .sort()
}
