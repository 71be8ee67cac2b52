/**
 * Priority: a pod's priority and preemption policy come from its
 * PriorityClass (or the class marked `globalDefault`, else 0 and
 * PreemptLowerPriority); a class that does not exist is refused, and so is
 * a priority the pod gives that differs from its class's. On update the
 * values set at creation are kept. For PriorityClasses it sees that only one
 * is the global default.
 */
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'

import type { ObjectReader } from '../../client/informer.js'
import { type BothPhases, isResource, on, podSpecOf, refuse, specOf } from './pods.js'

/** What a pod gets without a class and without a default one. */
const NO_CLASS_PRIORITY = 0
const DEFAULT_PREEMPTION = 'PreemptLowerPriority'

const value = (pc: KubeObject): number => (typeof pc['value'] === 'number' ? pc['value'] : 0)

/** The class marked globalDefault; of several (possible when created concurrently), the lowest value, as upstream. */
function defaultClass(classes: ObjectReader): KubeObject | undefined {
  return classes
    .list()
    .filter((pc) => pc['globalDefault'] === true)
    .sort((x, y) => value(x) - value(y))[0]
}

async function admitPod(a: AdmissionAttributes, classes: ObjectReader): Promise<void> {
  const spec = podSpecOf(a)
  if (!spec) return
  if (a.operation === 'UPDATE') {
    // Set on create; validation refuses changing them, so an update leaving them out keeps them.
    const old = specOf(a.oldObject)
    if (spec['priority'] === undefined && old['priority'] !== undefined) spec['priority'] = old['priority']
    if (spec['preemptionPolicy'] === undefined && old['preemptionPolicy'] !== undefined) spec['preemptionPolicy'] = old['preemptionPolicy']
    return
  }
  let priority = NO_CLASS_PRIORITY
  let preemption: unknown = DEFAULT_PREEMPTION
  const className = typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : ''
  if (!className) {
    const pc = defaultClass(classes)
    if (pc) {
      spec['priorityClassName'] = pc.metadata.name
      priority = value(pc)
      preemption = pc['preemptionPolicy']
    }
  } else {
    const pc = await classes.read('', className)
    if (!pc) throw refuse(a, `no PriorityClass with name ${className} was found`)
    priority = value(pc)
    preemption = pc['preemptionPolicy']
  }
  if (spec['priority'] !== undefined && spec['priority'] !== priority)
    throw refuse(
      a,
      `the integer value of priority (${String(spec['priority'])}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    )
  spec['priority'] = priority
  if (typeof preemption !== 'string') return
  if (spec['preemptionPolicy'] !== undefined && spec['preemptionPolicy'] !== preemption)
    throw refuse(
      a,
      `the string value of PreemptionPolicy (${String(spec['preemptionPolicy'])}) must not be provided in pod spec; priority admission controller computed ${preemption} from the given PriorityClass name`,
    )
  spec['preemptionPolicy'] = preemption
}

function validateClass(a: AdmissionAttributes, classes: ObjectReader): void {
  if (!isResource(a, 'scheduling.k8s.io', 'priorityclasses') || a.subresource || a.object?.['globalDefault'] !== true) return
  const current = defaultClass(classes)
  if (!current) return
  if (a.operation === 'CREATE' || current.metadata.name !== a.object.metadata.name)
    throw refuse(a, `PriorityClass ${current.metadata.name ?? ''} is already marked as default. Only one default can exist`)
}

export function priority(classes: ObjectReader): BothPhases {
  return {
    name: 'Priority',
    handles: on('CREATE', 'UPDATE'),
    admit: (a: AdmissionAttributes) => admitPod(a, classes),
    validate: (a: AdmissionAttributes) => validateClass(a, classes),
  }
}
