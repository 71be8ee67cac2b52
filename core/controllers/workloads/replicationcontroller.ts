/**
 * Upstream's ReplicationController manager (`replicationcontroller`): the
 * ReplicaSet logic over ReplicationControllers, whose selector is a plain
 * map of labels (an empty one matches every pod, as upstream's does).
 */
import { labelSelectorFromObject } from '../../machinery/label-selector.js'
import { replicationControllers } from '../../resources/core/replication.js'
import { replicaController } from './replica-control.js'

export const replicationControllerController = replicaController({
  name: 'replicationcontroller',
  serviceAccount: 'replication-controller',
  resource: replicationControllers,
  selectorOf: (rc) => labelSelectorFromObject({ matchLabels: (rc['spec'] as { selector?: Record<string, string> } | undefined)?.selector ?? {} }),
})
