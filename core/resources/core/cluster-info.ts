/**
 * Bindings and ComponentStatuses: core resources computed rather than kept.
 * A Binding assigns a pod to a node (core/registry/pod-binding.ts);
 * component statuses report the health of the control plane's parts.
 */
import { methodNotSupported } from '../../machinery/status-error.js'
import type { ResourceEntry } from '../catalogue.js'
import { column, nameColumn } from '../columns/common.js'
import { at, list, text } from '../columns/values.js'
import { defineResource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { anyName } from '../names.js'

export const bindings: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Binding',
  resource: 'bindings',
  namespaced: true,
  verbs: ['create'],
  validateName: anyName,
  // Never stored: the registry's handlers bind the pod (core/registry/pod-binding.ts) before this is reached.
  virtualCreate: () => {
    throw methodNotSupported({ group: '', resource: 'bindings' }, 'create')
  },
})

/** What one check found, in a ComponentCondition's terms. */
export interface ComponentHealth {
  status: 'True' | 'False' | 'Unknown'
  message: string
  error: string
}

/** One component `componentstatuses` reports. */
export interface ComponentProbe {
  /** The object's name (`scheduler`, `controller-manager`, `etcd-0`). */
  name: string
  check(): Promise<ComponentHealth>
}

function healthy(cs: KubeObject): unknown {
  return list(cs['conditions']).find((c) => text(at(c, 'type')) === 'Healthy')
}

export const componentStatuses: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ComponentStatus',
  resource: 'componentstatuses',
  namespaced: false,
  shortNames: ['cs'],
  verbs: ['get', 'list'],
  computed: true,
  deprecated: { major: 1, minor: 19 },
  columns: [
    nameColumn,
    column('Status', 'Healthy, Unhealthy or Unknown.', (cs) => {
      const c = healthy(cs)
      if (c === undefined) return 'Unknown'
      return text(at(c, 'status')) === 'True' ? 'Healthy' : 'Unhealthy'
    }),
    column('Message', 'What the component reported.', (cs) => text(at(healthy(cs), 'message'))),
    column('Error', 'Why the check failed.', (cs) => text(at(healthy(cs), 'error'))),
  ],
})
