/** Nodes, kept under `/registry/minions/` as upstream has since its first release. */
import { fieldLabelNotSupported } from '../field-labels.js'
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { at, list, record, text } from '../columns/values.js'
import { connectSubresource, defineResource, PROXY_VERBS, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { defaultNodeAllocatable, prepareNodeForCreate, prepareNodeForUpdate, prepareNodeStatusUpdate, syncPodCIDRs } from './node-strategy.js'
import { validateNodeInSteps, validateNodeUpdate } from './node-validation.js'
import { appendAll } from '../../machinery/append-all.js'

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/'
const ROLE_LABEL = 'kubernetes.io/role'

/** `Ready`, `NotReady` or `Unknown`, then `SchedulingDisabled` for a cordoned node. */
function nodeStatus(node: KubeObject): string {
  const ready = list(at(node, 'status', 'conditions')).find((c) => text(at(c, 'type')) === 'Ready')
  const status = [ready === undefined ? 'Unknown' : text(at(ready, 'status')) === 'True' ? 'Ready' : 'NotReady']
  if (at(node, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled')
  return status.join(',')
}

/** Roles from `node-role.kubernetes.io/<role>` labels and the older `kubernetes.io/role`. */
function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>()
  for (const [k, v] of Object.entries(record(node.metadata.labels))) {
    if (k.startsWith(ROLE_LABEL_PREFIX) && k.length > ROLE_LABEL_PREFIX.length) roles.add(k.slice(ROLE_LABEL_PREFIX.length))
    else if (k === ROLE_LABEL && v) roles.add(text(v))
  }
  return roles.size > 0 ? [...roles].sort().join(',') : '<none>'
}

function address(node: KubeObject, type: string): string {
  const found = list(at(node, 'status', 'addresses')).find((a) => text(at(a, 'type')) === type)
  return found === undefined ? '<none>' : text(at(found, 'address'))
}

function nodeInfo(field: string): (node: KubeObject) => string {
  return (node) => text(at(node, 'status', 'nodeInfo', field)) || '<unknown>'
}

export const nodes: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Node',
  resource: 'nodes',
  namespaced: false,
  shortNames: ['no'],
  subresources: [
    connectSubresource('proxy', 'NodeProxyOptions', PROXY_VERBS),
    // nodeStatusStrategy: the update rules alone (ValidateNodeUpdate), not the create rules a spec update repeats.
    { ...statusSubresource('Node'), prepareForUpdate: prepareNodeStatusUpdate, validateUpdate: validateNodeUpdate },
  ],
  storagePath: 'minions',
  // Nodes may carry their status from creation on (a node agent registers with it).
  strategy: {
    normalize: syncPodCIDRs,
    applyDefaults: defaultNodeAllocatable,
    prepareForCreate: prepareNodeForCreate,
    prepareForUpdate: prepareNodeForUpdate,
    validate: validateNodeInSteps,
    *validateUpdate(node, old) {
      const errs = yield* validateNodeInSteps(node)
      appendAll(errs, validateNodeUpdate(node, old))
      return errs
    },
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (node) => ({ 'spec.unschedulable': String(at(node, 'spec', 'unschedulable') === true) }),
  },
  columns: [
    nameColumn,
    column('Status', 'Whether the node is ready and schedulable.', nodeStatus),
    column('Roles', 'The roles its labels give the node.', nodeRoles),
    ageColumn,
    column('Version', 'The node agent version.', (node) => text(at(node, 'status', 'nodeInfo', 'kubeletVersion'))),
    wideColumn('Internal-IP', 'The first internal address.', (node) => address(node, 'InternalIP')),
    wideColumn('External-IP', 'The first external address.', (node) => address(node, 'ExternalIP')),
    wideColumn('OS-Image', 'The operating system image.', nodeInfo('osImage')),
    wideColumn('Kernel-Version', 'The kernel version.', nodeInfo('kernelVersion')),
    wideColumn('Container-Runtime', 'The container runtime and its version.', nodeInfo('containerRuntimeVersion')),
  ],
})
