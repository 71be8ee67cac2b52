/**
 * PodTopologyLabels (upstream: plugin/pkg/admission/podtopologylabels, new
 * in v1.33): a pod bound to a node (its `binding` subresource, or a pod
 * created with `spec.nodeName`) gets the node's `topology.k8s.io/zone` and
 * `topology.k8s.io/region` labels, without overwriting labels it has.
 *
 * Upstream runs it only with the PodTopologyLabelsAdmission feature gate
 * on, which is off by default (alpha in v1.33, and absent at the v1.32 this
 * server reports): the server builds it disabled, and then it changes nothing.
 */
import { pods } from '../../resources/core/pods.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { MutatingAdmission } from '../mutating.js'
import { isResource } from './forbidden.js'
import { specOf } from './storage-classes.js'
import type { AdmissionPluginFactory } from '../plugins.js'

export const TOPOLOGY_LABELS: readonly string[] = ['topology.k8s.io/zone', 'topology.k8s.io/region']

/** Whether the gate is on at the server's version (see above). */
export const POD_TOPOLOGY_LABELS_GATE_DEFAULT = false

function copyTopologyLabels(target: KubeObject, node: KubeObject | undefined): void {
  const wanted = Object.entries(node?.metadata.labels ?? {}).filter(([key]) => TOPOLOGY_LABELS.includes(key))
  if (!wanted.length) return
  const labels = (target.metadata.labels ??= {})
  for (const [key, value] of wanted) if (!(key in labels)) labels[key] = value
}

export function podTopologyLabels(enabled: boolean, readNode: (name: string) => KubeObject | undefined): MutatingAdmission {
  return {
    name: 'PodTopologyLabels',
    handles: (operation) => enabled && operation === 'CREATE',
    admit(a) {
      const obj = a.object
      if (!enabled || !obj) return
      if (isResource(a, pods.group, pods.resource)) {
        const nodeName = specOf(obj)['nodeName']
        if (typeof nodeName === 'string' && nodeName) copyTopologyLabels(obj, readNode(nodeName))
      } else if (isResource(a, pods.group, pods.resource, 'binding')) {
        // The binding's labels go onto the pod it binds.
        const target = obj['target']
        if (!isPlainObject(target) || target['kind'] !== 'Node' || typeof target['name'] !== 'string') return
        copyTopologyLabels(obj, readNode(target['name']))
      }
    },
  }
}

/** Built as the gate's default has it (off): no node index is needed to change nothing. */
export const podTopologyLabelsFactory: AdmissionPluginFactory = () => podTopologyLabels(POD_TOPOLOGY_LABELS_GATE_DEFAULT, () => undefined)
