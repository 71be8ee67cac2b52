/** scheduling.k8s.io/v1: priority classes. The reserved system- names belong in its strategy. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { int, textAt } from '../columns/values.js'
import { defineResource } from '../define.js'

export const priorityClasses: ResourceEntry = defineResource({
  group: 'scheduling.k8s.io',
  version: 'v1',
  kind: 'PriorityClass',
  resource: 'priorityclasses',
  namespaced: false,
  shortNames: ['pc'],
  columns: [
    nameColumn,
    column('Value', 'The priority of its pods.', (pc) => int(pc['value']), { type: 'integer' }),
    column('Global-Default', 'Whether pods without a class get this one.', (pc) => pc['globalDefault'] === true, { type: 'boolean' }),
    ageColumn,
    column('PreemptionPolicy', 'Whether its pods preempt others.', textAt('preemptionPolicy')),
  ],
})
