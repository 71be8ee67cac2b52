/** apps/v1: the workload controllers' objects. Scaling, rollout and status updates belong in their strategies. */
import { validateControllerRevision, validateControllerRevisionUpdate } from '../apps/controller-revision-rules.js'
import { applyDaemonSetDefaultsInSteps, prepareDaemonSetForCreate, prepareDaemonSetForUpdate, validateDaemonSetInSteps, validateDaemonSetUpdateInSteps } from '../apps/daemonset.js'
import { applyDeploymentDefaultsInSteps, validateDeploymentInSteps, validateDeploymentUpdateInSteps } from '../apps/deployment.js'
import { applyReplicaSetDefaultsInSteps, validateReplicaSetInSteps, validateReplicaSetUpdateInSteps } from '../apps/replicaset.js'
import { applyStatefulSetDefaultsInSteps, validateStatefulSetInSteps, validateStatefulSetUpdateInSteps } from '../apps/statefulset.js'
import {
  validateDaemonSetStatusUpdate,
  validateDeploymentStatusUpdate,
  validateReplicaSetStatusUpdate,
  validateStatefulSetStatusUpdate,
} from '../apps/workload-status-rules.js'
import type { ResourceEntry, StrategyContext } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { containerCells, formatLabels, formatLabelSelector, labelSelectorText } from '../columns/format.js'
import { at, int } from '../columns/values.js'
import { defineResource, freshStatus, scaleSubresource, statusSubresource } from '../define.js'
import { dnsLabelName } from '../names.js'
import type { KubeObject } from '../../machinery/object.js'

/** spec.replicas as upstream's defaulting leaves it: 1 when unset. */
export function desiredReplicas(obj: KubeObject): number {
  const replicas = at(obj, 'spec', 'replicas')
  return typeof replicas === 'number' ? replicas : 1
}

function status(field: string): (obj: KubeObject) => number {
  return (obj) => int(at(obj, 'status', field))
}

/** The pod spec rules that depend on the server (`--allow-privileged`). */
const podOptions = (ctx: StrategyContext) => ({ allowPrivileged: ctx.allowPrivileged ?? false })

const templateColumns = [
  wideColumn('Containers', 'The containers of the pod template.', (obj) => containerCells(at(obj, 'spec', 'template', 'spec')).names),
  wideColumn('Images', 'The images of those containers.', (obj) => containerCells(at(obj, 'spec', 'template', 'spec')).images),
]

export const deployments: ResourceEntry = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  // deploymentStatusStrategy: the labels stay as stored, only the status is checked.
  subresources: [scaleSubresource, { ...statusSubresource('Deployment', ['labels']), validateUpdate: validateDeploymentStatusUpdate }],
  tracksGeneration: true,
  strategy: {
    applyDefaults: applyDeploymentDefaultsInSteps,
    prepareForCreate: freshStatus(),
    validate: (d, ctx) => validateDeploymentInSteps(d, podOptions(ctx)),
    validateUpdate: (d, old, ctx) => validateDeploymentUpdateInSteps(d, old, podOptions(ctx)),
  },
  columns: [
    nameColumn,
    column('Ready', 'Ready pods out of those wanted.', (d) => `${int(at(d, 'status', 'readyReplicas'))}/${desiredReplicas(d)}`),
    column('Up-to-date', 'Pods running the latest template.', status('updatedReplicas')),
    column('Available', 'Pods available to serve.', status('availableReplicas')),
    ageColumn,
    ...templateColumns,
    wideColumn('Selector', 'The pods it manages.', (d) => labelSelectorText(at(d, 'spec', 'selector'))),
  ],
})

export const replicaSets: ResourceEntry = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  resource: 'replicasets',
  namespaced: true,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: [scaleSubresource, { ...statusSubresource('ReplicaSet'), validateUpdate: validateReplicaSetStatusUpdate }],
  tracksGeneration: true,
  strategy: {
    applyDefaults: applyReplicaSetDefaultsInSteps,
    prepareForCreate: freshStatus({ replicas: 0 }),
    validate: (rs, ctx) => validateReplicaSetInSteps(rs, podOptions(ctx)),
    validateUpdate: (rs, old, ctx) => validateReplicaSetUpdateInSteps(rs, old, podOptions(ctx)),
    fieldSet: (rs) => ({ 'status.replicas': String(int(at(rs, 'status', 'replicas'))) }),
  },
  columns: [
    nameColumn,
    column('Desired', 'How many pods are wanted.', desiredReplicas, { type: 'integer' }),
    column('Current', 'How many pods exist.', status('replicas'), { type: 'integer' }),
    column('Ready', 'How many pods are ready.', status('readyReplicas'), { type: 'integer' }),
    ageColumn,
    ...templateColumns,
    wideColumn('Selector', 'The pods it manages.', (rs) => formatLabelSelector(at(rs, 'spec', 'selector'))),
  ],
})

export const statefulSets: ResourceEntry = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  resource: 'statefulsets',
  namespaced: true,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: [scaleSubresource, { ...statusSubresource('StatefulSet'), validateUpdate: validateStatefulSetStatusUpdate }],
  tracksGeneration: true,
  // Its pods are named `<name>-<ordinal>` and get it as their hostname: a DNS label.
  validateName: dnsLabelName,
  strategy: {
    applyDefaults: applyStatefulSetDefaultsInSteps,
    prepareForCreate: freshStatus({ availableReplicas: 0, replicas: 0 }),
    validate: validateStatefulSetInSteps,
    validateUpdate: validateStatefulSetUpdateInSteps,
  },
  columns: [
    nameColumn,
    column('Ready', 'Ready pods out of those wanted.', (s) => `${int(at(s, 'status', 'readyReplicas'))}/${desiredReplicas(s)}`),
    ageColumn,
    ...templateColumns,
  ],
})

export const daemonSets: ResourceEntry = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  tracksGeneration: true,
  resource: 'daemonsets',
  namespaced: true,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: [{ ...statusSubresource('DaemonSet'), validateUpdate: validateDaemonSetStatusUpdate }],
  strategy: {
    applyDefaults: applyDaemonSetDefaultsInSteps,
    prepareForCreate: (ds) => {
      freshStatus({ currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 })(ds)
      prepareDaemonSetForCreate(ds)
    },
    prepareForUpdate: prepareDaemonSetForUpdate,
    validate: (ds, ctx) => validateDaemonSetInSteps(ds, podOptions(ctx)),
    validateUpdate: (ds, old, ctx) => validateDaemonSetUpdateInSteps(ds, old, podOptions(ctx)),
  },
  columns: [
    nameColumn,
    column('Desired', 'Nodes that should run the pod.', status('desiredNumberScheduled'), { type: 'integer' }),
    column('Current', 'Nodes that run the pod.', status('currentNumberScheduled'), { type: 'integer' }),
    column('Ready', 'Nodes whose pod is ready.', status('numberReady'), { type: 'integer' }),
    column('Up-to-date', 'Nodes running the latest template.', status('updatedNumberScheduled'), { type: 'integer' }),
    column('Available', 'Nodes whose pod is available.', status('numberAvailable'), { type: 'integer' }),
    column('Node Selector', 'The nodes the pods may run on.', (ds) => formatLabels(at(ds, 'spec', 'template', 'spec', 'nodeSelector'))),
    ageColumn,
    ...templateColumns,
    wideColumn('Selector', 'The pods it manages.', (ds) => formatLabelSelector(at(ds, 'spec', 'selector'))),
  ],
})

/** The controlling owner as `kind.group/name`, lower case, or `<none>`. */
function controllerOf(obj: KubeObject): string {
  const owner = obj.metadata.ownerReferences?.find((r) => r.controller === true)
  if (!owner) return '<none>'
  const group = owner.apiVersion.includes('/') ? owner.apiVersion.slice(0, owner.apiVersion.indexOf('/')) : ''
  const groupKind = group ? `${owner.kind}.${group}` : owner.kind
  return `${groupKind.toLowerCase()}/${owner.name}`
}

export const controllerRevisions: ResourceEntry = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  resource: 'controllerrevisions',
  namespaced: true,
  strategy: { validate: validateControllerRevision, validateUpdate: validateControllerRevisionUpdate },
  columns: [
    nameColumn,
    column('Controller', 'The controller that owns the revision.', controllerOf),
    column('Revision', 'The revision number.', (cr) => int(cr['revision'])),
    ageColumn,
  ],
})

export const appsEntries: ResourceEntry[] = [controllerRevisions, daemonSets, deployments, replicaSets, statefulSets]
