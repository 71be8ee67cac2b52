/**
 * What upstream's default-enabled mutating plugins set on pods, as far as the
 * server emulates them today: ServiceAccount (the `default` account),
 * Priority (priority 0 and PreemptLowerPriority without a class, kept on
 * update) and DefaultTolerationSeconds (300s for unready and unreachable
 * nodes). They run as admission, after managedFields are recorded, so none
 * of these fields is owned by the client that created the pod.
 */
import { isPlainObject, type KubeObject } from '../resources/object.js'
import { type AdmissionAttributes, type AdmissionOperation, type MutatingAdmission, mutatingChain } from './mutating.js'

type Obj = Record<string, unknown>

/** The pod itself (upstream's plugins skip subresources such as status and binding). */
function podOf(a: AdmissionAttributes): Obj | undefined {
  const pod = a.object
  if (a.entry.group !== '' || a.entry.resource !== 'pods' || a.subresource || !pod) return undefined
  if (!isPlainObject(pod['spec'])) pod['spec'] = {}
  return pod['spec'] as Obj
}

const specOf = (obj: KubeObject | undefined): Obj => (obj && isPlainObject(obj['spec']) ? obj['spec'] : {})

const on =
  (...operations: AdmissionOperation[]) =>
  (operation: AdmissionOperation): boolean =>
    operations.includes(operation)

/** ServiceAccount: a pod that names no account runs as `default` (v1 mirrors it in serviceAccount). */
export const serviceAccountAdmission: MutatingAdmission = {
  name: 'ServiceAccount',
  handles: on('CREATE'),
  admit(a) {
    const spec = podOf(a)
    if (spec && !spec['serviceAccountName']) spec['serviceAccountName'] = spec['serviceAccount'] = 'default'
  },
}

/**
 * Priority: without a class, priority 0 and PreemptLowerPriority; an update
 * that leaves them out keeps the stored ones, as the plugin set them on create.
 */
export const priorityAdmission: MutatingAdmission = {
  name: 'Priority',
  handles: on('CREATE', 'UPDATE'),
  admit(a) {
    const spec = podOf(a)
    if (!spec) return
    if (a.operation === 'UPDATE') {
      const old = specOf(a.oldObject)
      if (spec['priority'] === undefined && old['priority'] !== undefined) spec['priority'] = old['priority']
      if (spec['preemptionPolicy'] === undefined && old['preemptionPolicy'] !== undefined) spec['preemptionPolicy'] = old['preemptionPolicy']
      return
    }
    if (spec['priority'] === undefined && !spec['priorityClassName']) spec['priority'] = 0
    if (!spec['preemptionPolicy']) spec['preemptionPolicy'] = 'PreemptLowerPriority'
  },
}

/** The NoExecute taints DefaultTolerationSeconds tolerates for 300s. */
const NODE_PROBLEM_TAINTS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']
const DEFAULT_TOLERATION_SECONDS = 300

/** Whether a toleration covers the NoExecute taint `key`: an empty key or effect matches any. */
function tolerates(t: unknown, key: string): boolean {
  if (!isPlainObject(t)) return false
  return (!t['key'] || t['key'] === key) && (!t['effect'] || t['effect'] === 'NoExecute')
}

/** DefaultTolerationSeconds: a toleration of each node-problem taint the pod does not already tolerate. */
export const defaultTolerationSecondsAdmission: MutatingAdmission = {
  name: 'DefaultTolerationSeconds',
  handles: on('CREATE', 'UPDATE'),
  admit(a) {
    const spec = podOf(a)
    if (!spec) return
    const tolerations = Array.isArray(spec['tolerations']) ? (spec['tolerations'] as unknown[]) : []
    const missing = NODE_PROBLEM_TAINTS.filter((key) => !tolerations.some((t) => tolerates(t, key)))
    if (missing.length === 0) return
    for (const key of missing) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS })
    spec['tolerations'] = tolerations
  },
}

/** The mutating plugins the server runs on every write until the admission chain is configurable. */
export const builtinMutatingAdmission: MutatingAdmission = mutatingChain('builtin', [
  serviceAccountAdmission,
  priorityAdmission,
  defaultTolerationSecondsAdmission,
])
