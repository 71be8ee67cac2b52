/**
 * What every node may do whatever its graph says (upstream's
 * bootstrappolicy.NodeRules at v1.32, the rules of the `system:node`
 * ClusterRole): the Node authorizer allows these for any kubelet identity,
 * after its per-object checks for the resources it subdivides.
 */
import type { Attributes } from './authorizer.js'

interface NodeRule {
  verbs: readonly string[]
  group: string
  /** `resource` or `resource/subresource`. */
  resources: readonly string[]
}

const READ = ['get', 'list', 'watch']

const rule = (verbs: readonly string[], group: string, ...resources: string[]): NodeRule => ({ verbs, group, resources })

export const NODE_RULES: readonly NodeRule[] = [
  // Checks of API access; these creates change nothing.
  rule(['create'], 'authentication.k8s.io', 'tokenreviews'),
  rule(['create'], 'authorization.k8s.io', 'subjectaccessreviews', 'localsubjectaccessreviews'),
  // Service environment variables of pods.
  rule(READ, '', 'services'),
  // Registering the Node and reporting its status (NodeRestriction admission narrows it to its own).
  rule(['create', 'get', 'list', 'watch'], '', 'nodes'),
  rule(['update', 'patch'], '', 'nodes/status'),
  rule(['update', 'patch'], '', 'nodes'),
  rule(['create', 'update', 'patch'], '', 'events'),
  rule(READ, '', 'pods'),
  // Mirror pods, pod status and evictions.
  rule(['create', 'delete'], '', 'pods'),
  rule(['update', 'patch'], '', 'pods/status'),
  rule(['create'], '', 'pods/eviction'),
  rule(READ, '', 'secrets', 'configmaps'),
  rule(['get'], '', 'persistentvolumeclaims', 'persistentvolumes'),
  rule(['get'], '', 'endpoints'),
  // Client certificate rotation.
  rule(['create', 'get', 'list', 'watch'], 'certificates.k8s.io', 'certificatesigningrequests'),
  rule(['get', 'create', 'update', 'patch', 'delete'], 'coordination.k8s.io', 'leases'),
  rule(['get'], 'storage.k8s.io', 'volumeattachments'),
  rule(['create'], '', 'serviceaccounts/token'),
  rule(['get', 'update', 'patch'], '', 'persistentvolumeclaims/status'),
  rule(['get', 'watch', 'list'], 'storage.k8s.io', 'csidrivers'),
  rule(['get', 'create', 'update', 'patch', 'delete'], 'storage.k8s.io', 'csinodes'),
  rule(READ, 'node.k8s.io', 'runtimeclasses'),
]

/** Whether one of the rules allows a resource request (nodes have no non-resource rules). */
export function nodeRulesAllow(attrs: Attributes): boolean {
  if (!attrs.isResourceRequest) return false
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource
  return NODE_RULES.some((r) => r.group === attrs.apiGroup && r.verbs.includes(attrs.verb) && r.resources.includes(resource))
}
