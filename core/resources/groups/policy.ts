/** policy/v1: PodDisruptionBudgets. Evictions are the pods/eviction subresource. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, int } from '../columns/values.js'
import { defineResource, freshStatus, statusSubresource } from '../define.js'
import { validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate } from '../policy/pdb-rules.js'

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
    // What a client sent as status is dropped; the four counts are in upstream's answer from the start.
    prepareForCreate: freshStatus({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }),
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
