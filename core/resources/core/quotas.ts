/** LimitRanges and ResourceQuotas: the per-namespace limits admission enforces. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, quantity, record } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { defaultLimitRangeItems } from './limit-range-defaults.js'
import { validateLimitRangeInSteps } from './limit-range-validation.js'

export const limitRanges: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  resource: 'limitranges',
  namespaced: true,
  shortNames: ['limits'],
  // Container items get their default limit from max and default request from default or min, as upstream defaults them.
  strategy: {
    // A PUT of a LimitRange not stored creates it, as upstream's strategy allows.
    allowCreateOnUpdate: true,
    applyDefaults: defaultLimitRangeItems,
    // Upstream's strategy names a LimitRange sent without a name (or generateName) by a new UUID.
    prepareForCreate: (limitRange) => {
      if (!limitRange.metadata.name) limitRange.metadata.name = crypto.randomUUID()
    },
    validate: validateLimitRangeInSteps,
    validateUpdate: validateLimitRangeInSteps,
  },
})

/** `resource: used/hard` for each quota'd resource, `limits.*` in their own column. */
function quotaUsage(limits: boolean): (quota: KubeObject) => string {
  return (quota) => {
    const hard = record(at(quota, 'status', 'hard'))
    const used = record(at(quota, 'status', 'used'))
    return Object.keys(hard)
      .sort()
      .filter((name) => name.startsWith('limits.') === limits)
      .map((name) => `${name}: ${quantity(used[name]) || '0'}/${quantity(hard[name])}`)
      .join(', ')
  }
}

export const resourceQuotas: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  resource: 'resourcequotas',
  namespaced: true,
  shortNames: ['quota'],
  subresources: [statusSubresource('ResourceQuota')],
  columns: [
    nameColumn,
    column('Request', 'Requests used and allowed.', quotaUsage(false)),
    column('Limit', 'Limits used and allowed.', quotaUsage(true)),
    ageColumn,
  ],
})
