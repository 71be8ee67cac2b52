/**
 * rbac.authorization.k8s.io/v1: roles and their bindings. Their names are
 * path segments, not DNS names (`system:controller:...`). Their rules live in
 * rbac/rules.ts; the escalation checks (may the writer grant this?) in
 * authz/rbac/escalation.ts. A PUT of one not stored creates it, as upstream's
 * four strategies allow.
 */
import { checkBindingWrite, checkRoleWrite } from '../../authz/rbac/escalation.js'
import type { ResourceEntry, TableColumn } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { at, list, text } from '../columns/values.js'
import { defineResource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { pathSegmentName } from '../names.js'
import {
  applyBindingDefaults,
  validateClusterRoleInSteps,
  validateClusterRoleBinding,
  validateClusterRoleUpdateInSteps,
  validateRoleInSteps,
  validateRoleBinding,
  validateRoleRefUnchanged,
} from '../rbac/rules.js'

const GROUP = 'rbac.authorization.k8s.io'

/** Subjects of one kind as upstream lists them: users and groups by name, service accounts as `namespace/name`. */
function subjects(kind: 'User' | 'Group' | 'ServiceAccount'): (binding: KubeObject) => string {
  return (binding) =>
    list(binding['subjects'])
      .filter((s) => text(at(s, 'kind')) === kind)
      .map((s) => (kind === 'ServiceAccount' ? `${text(at(s, 'namespace'))}/${text(at(s, 'name'))}` : text(at(s, 'name'))))
      .join(', ')
}

const bindingColumns: TableColumn[] = [
  nameColumn,
  column('Role', 'The role it grants.', (b) => `${text(at(b, 'roleRef', 'kind'))}/${text(at(b, 'roleRef', 'name'))}`),
  ageColumn,
  wideColumn('Users', 'The users it binds.', subjects('User')),
  wideColumn('Groups', 'The groups it binds.', subjects('Group')),
  wideColumn('ServiceAccounts', 'The service accounts it binds.', subjects('ServiceAccount')),
]

export const roles: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Role',
  resource: 'roles',
  namespaced: true,
  validateName: pathSegmentName,
  strategy: {
    allowCreateOnUpdate: true,
    authorizeWrite: (role, old, ctx) => checkRoleWrite('roles', role, old, ctx),
    validate: validateRoleInSteps,
    validateUpdate: validateRoleInSteps,
  },
})

export const clusterRoles: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ClusterRole',
  resource: 'clusterroles',
  namespaced: false,
  validateName: pathSegmentName,
  strategy: {
    allowCreateOnUpdate: true,
    authorizeWrite: (role, old, ctx) => checkRoleWrite('clusterroles', role, old, ctx),
    validate: (role) => validateClusterRoleInSteps(role),
    validateUpdate: validateClusterRoleUpdateInSteps,
  },
})

export const roleBindings: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'RoleBinding',
  resource: 'rolebindings',
  namespaced: true,
  validateName: pathSegmentName,
  strategy: {
    allowCreateOnUpdate: true,
    applyDefaults: applyBindingDefaults,
    authorizeWrite: (binding, old, ctx) => checkBindingWrite('rolebindings', binding, old, ctx),
    validate: validateRoleBinding,
    validateUpdate: (binding, old) => [...validateRoleBinding(binding), ...validateRoleRefUnchanged(binding, old)],
  },
  columns: bindingColumns,
})

export const clusterRoleBindings: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ClusterRoleBinding',
  resource: 'clusterrolebindings',
  namespaced: false,
  validateName: pathSegmentName,
  strategy: {
    allowCreateOnUpdate: true,
    applyDefaults: applyBindingDefaults,
    authorizeWrite: (binding, old, ctx) => checkBindingWrite('clusterrolebindings', binding, old, ctx),
    validate: validateClusterRoleBinding,
    validateUpdate: (binding, old) => [...validateClusterRoleBinding(binding), ...validateRoleRefUnchanged(binding, old)],
  },
  columns: bindingColumns,
})

export const rbacEntries: ResourceEntry[] = [clusterRoleBindings, clusterRoles, roleBindings, roles]
