/** flowcontrol.apiserver.k8s.io/v1: API priority and fairness configuration. */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { at, int, list, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'

const GROUP = 'flowcontrol.apiserver.k8s.io'

/** A queuing setting of a Limited level, `<none>` for other levels. */
function queuing(field: string): (plc: KubeObject) => unknown {
  return (plc) => {
    if (at(plc, 'spec', 'limited') === undefined) return '<none>'
    const queuing = at(plc, 'spec', 'limited', 'limitResponse', 'queuing')
    return queuing === undefined ? '<none>' : int(at(queuing, field))
  }
}

export const flowSchemas: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'FlowSchema',
  resource: 'flowschemas',
  namespaced: false,
  // Its status strategy keeps the stored metadata whole.
  subresources: [statusSubresource('FlowSchema', 'all')],
  columns: [
    nameColumn,
    column('PriorityLevel', 'The priority level its requests get.', textAt('spec', 'priorityLevelConfiguration', 'name')),
    column('MatchingPrecedence', 'Lower matches first.', (fs) => int(at(fs, 'spec', 'matchingPrecedence'))),
    column('DistinguisherMethod', 'How flows are told apart.', (fs) => text(at(fs, 'spec', 'distinguisherMethod', 'type')) || '<none>'),
    ageColumn,
    column('MissingPL', 'Whether its priority level is missing.', (fs) => {
      const dangling = list(at(fs, 'status', 'conditions')).find((c) => text(at(c, 'type')) === 'Dangling')
      return dangling === undefined ? '?' : text(at(dangling, 'status'))
    }),
  ],
})

export const priorityLevelConfigurations: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'PriorityLevelConfiguration',
  resource: 'prioritylevelconfigurations',
  namespaced: false,
  // Its status strategy keeps the stored metadata whole.
  subresources: [statusSubresource('PriorityLevelConfiguration', 'all')],
  columns: [
    nameColumn,
    column('Type', 'Exempt or Limited.', textAt('spec', 'type')),
    column('NominalConcurrencyShares', 'Its share of the concurrency.', (plc) =>
      at(plc, 'spec', 'limited') === undefined ? '<none>' : int(at(plc, 'spec', 'limited', 'nominalConcurrencyShares')),
    ),
    column('Queues', 'How many queues it has.', queuing('queues')),
    column('HandSize', 'How many queues a flow may use.', queuing('handSize')),
    column('QueueLengthLimit', 'How long a queue may grow.', queuing('queueLengthLimit')),
    ageColumn,
  ],
})

export const flowControlEntries: ResourceEntry[] = [flowSchemas, priorityLevelConfigurations]
