/**
 * The shapes of upstream's default RBAC policy as the generated data holds
 * it (core/resources/rbac/generated/bootstrap-policy.ts): the parts of a
 * role or binding the post-start hook writes, without apiVersion and kind.
 */

export interface PolicyRule {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
  nonResourceURLs?: string[]
}

export interface LabelSelectorData {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>
}

export interface BootstrapMetadata {
  name: string
  /** Set on Roles and RoleBindings only. */
  namespace?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

export interface BootstrapRole {
  metadata: BootstrapMetadata
  /** ClusterRoles only: the roles whose rules this one gathers. */
  aggregationRule?: { clusterRoleSelectors: LabelSelectorData[] }
  rules: PolicyRule[]
}

export interface Subject {
  kind: string
  name: string
  apiGroup?: string
  namespace?: string
}

export interface BootstrapBinding {
  metadata: BootstrapMetadata
  roleRef: { apiGroup: string; kind: string; name: string }
  subjects: Subject[]
}
