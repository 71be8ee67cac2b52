/**
 * Pods: the unit everything else schedules. Their lifecycle (binding,
 * eviction, graceful deletion, status and resize) is upstream's pod
 * strategy; the hooks belong in `strategy` below.
 */
import type { ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { podSummary, readinessGates } from '../columns/pod-status.js'
import { at, text } from '../columns/values.js'
import { connectSubresource, defineResource, PROXY_VERBS, statusSubresource } from '../define.js'
import type { KubeObject } from '../object.js'

function podIP(pod: KubeObject): string {
  return text(at(pod, 'status', 'podIPs', 0, 'ip')) || text(at(pod, 'status', 'podIP'))
}

export const pods: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: [
    connectSubresource('attach', 'PodAttachOptions', ['create', 'get']),
    { name: 'binding', kind: 'Binding', verbs: ['create'] },
    { name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
    connectSubresource('exec', 'PodExecOptions', ['create', 'get']),
    connectSubresource('log', 'Pod', ['get']),
    connectSubresource('portforward', 'PodPortForwardOptions', ['create', 'get']),
    connectSubresource('proxy', 'PodProxyOptions', PROXY_VERBS),
    { name: 'resize', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    statusSubresource('Pod'),
  ],
  strategy: {
    // The fields upstream lets `--field-selector` pick pods by (kubectl describe node, the scheduler).
    fieldSet: (pod) => ({
      'spec.nodeName': text(at(pod, 'spec', 'nodeName')),
      'spec.restartPolicy': text(at(pod, 'spec', 'restartPolicy')),
      'spec.schedulerName': text(at(pod, 'spec', 'schedulerName')),
      'spec.serviceAccountName': text(at(pod, 'spec', 'serviceAccountName')),
      'spec.hostNetwork': String(at(pod, 'spec', 'hostNetwork') === true),
      'status.phase': text(at(pod, 'status', 'phase')),
      'status.podIP': podIP(pod),
      'status.nominatedNodeName': text(at(pod, 'status', 'nominatedNodeName')),
    }),
  },
  columns: [
    nameColumn,
    column('Ready', 'How many of the containers are ready.', (pod, now) => podSummary(pod, now).ready),
    column('Status', 'The aggregate status of the containers.', (pod, now) => podSummary(pod, now).status),
    column('Restarts', 'How often the containers restarted, and when last.', (pod, now) => podSummary(pod, now).restarts),
    ageColumn,
    wideColumn('IP', 'The pod IP.', (pod) => podIP(pod) || '<none>'),
    wideColumn('Node', 'The node the pod is bound to.', (pod) => text(at(pod, 'spec', 'nodeName')) || '<none>'),
    wideColumn(
      'Nominated Node',
      'The node the scheduler nominated while preempting.',
      (pod) => text(at(pod, 'status', 'nominatedNodeName')) || '<none>',
    ),
    wideColumn('Readiness Gates', 'How many readiness gates report True.', readinessGates),
  ],
})
