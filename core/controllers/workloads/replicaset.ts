/** Upstream's ReplicaSet controller (`replicaset`): a ReplicaSet's pods, counted and reported. */
import { labelSelectorFromObject, type LabelSelectorObject } from '../../machinery/label-selector.js'
import { replicaSets } from '../../resources/groups/apps.js'
import { replicaController } from './replica-control.js'

export const replicaSetController = replicaController({
  name: 'replicaset',
  serviceAccount: 'replicaset-controller',
  resource: replicaSets,
  selectorOf: (rs) => labelSelectorFromObject((rs['spec'] as { selector?: LabelSelectorObject } | undefined)?.selector),
})
