/** policy/v1: PodDisruptionBudgets. Evictions are the pods/eviction subresource. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, int } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import { clearStatus, validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate } from '../policy/pdb-rules.js'

/** An int-or-string budget as written, `N/A` when unset. */
function budget(field: string) {
  return (pdb: unknown) => {
    const v = at(pdb, 'spec', field)
    return typeof v === 'number' || typeof v === 'string' ? String(v) : 'N/A'
  }
}

export const podDisruptionBudgets: ResourceEntry = defineResource({
  group: 'policy',
  version: 'v1',
  kind: 'PodDisruptionBudget',
  tracksGeneration: true,
  resource: 'poddisruptionbudgets',
  namespaced: true,
  shortNames: ['pdb'],
  subresources: [statusSubresource('PodDisruptionBudget')],
  strategy: {
    // Evictions count on the budget they read: an update must name its resourceVersion, as upstream's strategy asks.
    allowUnconditionalUpdate: false,
    prepareForCreate: clearStatus,
    validate: (pdb) => validatePodDisruptionBudget(pdb),
    validateUpdate: validatePodDisruptionBudgetUpdate,
  },
  columns: [
    nameColumn,
    column('Min Available', 'Pods that must stay available.', budget('minAvailable')),
    column('Max Unavailable', 'Pods that may be unavailable.', budget('maxUnavailable')),
    column('Allowed Disruptions', 'Pods that may be disrupted now.', (pdb) => int(at(pdb, 'status', 'disruptionsAllowed')), {
      type: 'integer',
    }),
    ageColumn,
  ],
})

export const policyEntries: ResourceEntry[] = [podDisruptionBudgets]
