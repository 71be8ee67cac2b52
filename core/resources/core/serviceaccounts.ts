import { type FieldError, fieldPath, typeInvalid } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { ALL_VERBS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, nameColumn } from '../columns/common.js'
import { defineResource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'

function validateServiceAccount(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  for (const list of ['secrets', 'imagePullSecrets']) {
    const value = obj[list]
    if (value !== undefined && value !== null && !Array.isArray(value))
      errs.push(typeInvalid(fieldPath(list), value, 'must be a list'))
  }
  const automount = obj['automountServiceAccountToken']
  if (automount !== undefined && automount !== null && typeof automount !== 'boolean')
    errs.push(typeInvalid(fieldPath('automountServiceAccountToken'), automount, 'must be a boolean'))
  return errs
}

export const serviceAccounts: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  resource: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  typeName: 'io.k8s.api.core.v1.ServiceAccount',
  validateName: isDNS1123Subdomain,
  strategy: {
    validate: validateServiceAccount,
    validateUpdate: validateServiceAccount,
  },
  columns: [
    nameColumn,
    {
      name: 'Secrets',
      type: 'string',
      description: 'How many secrets the service account lists.',
      priority: 0,
      cell: (obj) => (Array.isArray(obj['secrets']) ? obj['secrets'].length : 0),
    },
    ageColumn,
  ],
})
