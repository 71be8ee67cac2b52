/**
 * Pods: the unit everything else schedules. Their lifecycle (binding,
 * eviction, graceful deletion, status and resize) is upstream's pod
 * strategy; the hooks belong in `strategy` below.
 */
import { fieldLabelNotSupported } from '../field-labels.js'
import { type FieldError, fieldPath, forbiddenField } from '../../machinery/field.js'
import type { ResourceEntry, StrategyContext } from '../catalogue.js'
import { ageColumn, column, nameColumn, wideColumn } from '../columns/common.js'
import { podSummary, readinessGates } from '../columns/pod-status.js'
import { at, text } from '../columns/values.js'
import { connectSubresource, defineResource, PROXY_VERBS, statusSubresource } from '../define.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../../machinery/object.js'
import { applyPodDefaultsInSteps } from './pod-spec-defaults.js'
import { ephemeralContainersSubresource } from './pod-ephemeral-containers.js'
import { resizeSubresource } from './pod-resize.js'
import { podGracePeriod } from './pod-deletion.js'
import { podQOSClassInSteps } from './pod-spec-resources.js'
import { type Checkpointed, runAtOnce } from '../../machinery/time-slice.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import { validatePodOnlyInSteps, validatePodSpecInSteps } from './pod-spec-validation.js'
import { validatePodSpecUpdate } from './pod-spec-update.js'
import { isValidDeletionCost, validatePodAnnotations, validatePodAnnotationUpdates } from './pod-annotation-rules.js'
import { syncPodIPs } from './pod-status-ips.js'
import { preparePodStatusUpdate, validatePodStatusUpdate } from './pod-status-validation.js'

function podIP(pod: KubeObject): string {
  return text(at(pod, 'status', 'podIPs', 0, 'ip')) || text(at(pod, 'status', 'podIP'))
}

type Obj = Record<string, unknown>

const specOf = (pod: KubeObject): Obj => (isPlainObject(pod['spec']) ? pod['spec'] : {})

/**
 * What the pod strategy settles on create: a fresh Pending status with the
 * QoS class. The service account, priority and node-problem tolerations are
 * admission's (core/admission/builtin/).
 */
function* prepareForCreate(pod: KubeObject, ctx: StrategyContext): Checkpointed<void> {
  const spec = specOf(pod)
  const status: Obj = { phase: 'Pending', qosClass: yield* podQOSClassInSteps(spec) }
  if (Array.isArray(spec['schedulingGates']) && spec['schedulingGates'].length)
    status['conditions'] = [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
        lastProbeTime: null,
        lastTransitionTime: formatTimestamp(ctx.now),
      },
    ]
  pod['status'] = status
}

/** A pod's spec rules, in checkpointed steps: its lists are as long as a body holds. */
function* validatePodInSteps(pod: KubeObject, ctx: StrategyContext): Checkpointed<FieldError[]> {
  const path = fieldPath('spec')
  const errs = yield* validatePodSpecInSteps(pod['spec'], path, { allowPrivileged: ctx.allowPrivileged ?? false })
  yield* appendAllInSteps(errs, yield* validatePodOnlyInSteps(pod['spec'], path))
  return errs
}

/** The same at once, for the subresources that change a pod in part (ephemeral containers, a resize). */
const validatePod = (pod: KubeObject, ctx: StrategyContext): FieldError[] => runAtOnce(validatePodInSteps(pod, ctx))

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
    ephemeralContainersSubresource(validatePod),
    { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
    connectSubresource('exec', 'PodExecOptions', ['create', 'get']),
    connectSubresource('log', 'Pod', ['get']),
    connectSubresource('portforward', 'PodPortForwardOptions', ['create', 'get']),
    connectSubresource('proxy', 'PodProxyOptions', PROXY_VERBS),
    resizeSubresource(validatePod),
    // podStatusStrategy: owner references and the deletion stamp stay as stored (old kubelets corrupt them);
    // only the status rules and the pod's annotation rules apply, not the spec's.
    {
      ...statusSubresource('Pod', ['deletionTimestamp', 'ownerReferences']),
      prepareForUpdate: preparePodStatusUpdate,
      validateUpdate: (pod, old) => [...validatePodAnnotationUpdates(pod, old), ...validatePodStatusUpdate(pod, old)],
    },
  ],
  strategy: {
    checkGracefulDelete: podGracePeriod,
    // podIP and podIPs as v1's conversion leaves them (pod-status-ips.ts).
    normalize: syncPodIPs,
    applyDefaults: (pod) => applyPodDefaultsInSteps(pod),
    prepareForCreate,
    prepareForUpdate: (pod, old) => {
      pod['status'] = old['status']
    },
    *validate(pod, ctx) {
      const errs = validatePodAnnotations(pod, false)
      yield* appendAllInSteps(errs, yield* validatePodInSteps(pod, ctx))
      if (Array.isArray(specOf(pod)['ephemeralContainers']) && (specOf(pod)['ephemeralContainers'] as unknown[]).length)
        errs.push(forbiddenField(fieldPath('spec').child('ephemeralContainers'), 'cannot be set on create'))
      return errs
    },
    // As upstream's ValidatePodUpdate: the annotations and the spec, then the annotations' own update rules (which
    // repeat the first), then what the spec may change.
    *validateUpdate(pod, old, ctx) {
      const errs = validatePodAnnotations(pod, !isValidDeletionCost(old.metadata.annotations ?? {}))
      yield* appendAllInSteps(errs, yield* validatePodInSteps(pod, ctx))
      appendAll(errs, validatePodAnnotationUpdates(pod, old))
      appendAll(errs, validatePodSpecUpdate(specOf(pod), specOf(old), fieldPath('spec')))
      return errs
    },
    // The fields upstream lets `--field-selector` pick pods by (kubectl describe node, the scheduler).
    fieldLabelRefusal: fieldLabelNotSupported,
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
