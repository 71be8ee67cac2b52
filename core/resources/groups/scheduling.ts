/** scheduling.k8s.io/v1: priority classes. Their rules, the reserved system- names included, are in scheduling/. */
import { forbidden } from '../../machinery/status-error.js'
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { int, textAt } from '../columns/values.js'
import { defineResource } from '../define.js'
import {
  applyPriorityClassDefaults,
  SYSTEM_PRIORITY_CLASSES,
  validatePriorityClass,
  validatePriorityClassUpdate,
} from '../scheduling/priority-class-rules.js'

const GROUP = 'scheduling.k8s.io'

export const priorityClasses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'PriorityClass',
  resource: 'priorityclasses',
  namespaced: false,
  shortNames: ['pc'],
  // Upstream's strategy sets 1 at creation and never counts a change (the value is fixed; the rest is description).
  tracksGeneration: 'at-creation',
  strategy: {
    applyDefaults: applyPriorityClassDefaults,
    validate: validatePriorityClass,
    validateUpdate: validatePriorityClassUpdate,
    // The system's own classes stay, as upstream's priority class storage refuses their deletion.
    beforeDelete(pc) {
      const name = pc.metadata.name ?? ''
      if (SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name))
        throw forbidden({ group: GROUP, resource: 'priorityclasses' }, name, 'this is a system priority class and cannot be deleted')
      return undefined
    },
  },
  columns: [
    nameColumn,
    column('Value', 'The priority of its pods.', (pc) => int(pc['value']), { type: 'integer' }),
    column('Global-Default', 'Whether pods without a class get this one.', (pc) => pc['globalDefault'] === true, { type: 'boolean' }),
    ageColumn,
    column('PreemptionPolicy', 'Whether its pods preempt others.', textAt('preemptionPolicy')),
  ],
})
