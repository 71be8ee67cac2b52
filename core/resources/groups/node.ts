/** node.k8s.io/v1: runtime classes. Their rules are in node/runtime-class-rules.ts. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { textAt } from '../columns/values.js'
import { defineResource } from '../define.js'
import { validateRuntimeClass, validateRuntimeClassUpdate } from '../node/runtime-class-rules.js'

export const runtimeClasses: ResourceEntry = defineResource({
  group: 'node.k8s.io',
  version: 'v1',
  kind: 'RuntimeClass',
  resource: 'runtimeclasses',
  namespaced: false,
  // Upstream's strategy refuses an update without a resourceVersion, and creates on a PUT of one not stored.
  strategy: { allowUnconditionalUpdate: false, allowCreateOnUpdate: true, validate: validateRuntimeClass, validateUpdate: validateRuntimeClassUpdate },
  columns: [nameColumn, column('Handler', 'The runtime handler on the node.', textAt('handler')), ageColumn],
})
