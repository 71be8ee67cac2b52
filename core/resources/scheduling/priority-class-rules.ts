/**
 * The rules of priority classes (upstream's pkg/apis/scheduling/validation
 * and scheduling/v1 helpers): user classes stay at or below one billion,
 * the `system-` names belong to the two classes the system defines, and a
 * class's value and preemption policy are fixed once created.
 */
import { type FieldError, fieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import type { KubeObject } from '../../machinery/object.js'

export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
const SYSTEM_PREFIX = 'system-'

/** The classes the system defines, with the value and globalDefault each must keep. */
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; globalDefault: boolean }[] = [
  { name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, globalDefault: false },
  { name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, globalDefault: false },
]

const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never']

function value(pc: KubeObject): number {
  return typeof pc['value'] === 'number' ? pc['value'] : 0
}

/** Why a `system-` class is not one the system defines, or undefined when it is. */
function systemClassProblem(name: string, pc: KubeObject): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name)
  if (!known) return `${name} is not a known system priority class`
  if (known.value !== value(pc)) return `value of ${name} PriorityClass must be ${known.value}`
  if (known.globalDefault !== (pc['globalDefault'] === true)) return `globalDefault of ${name} PriorityClass must be ${known.globalDefault}`
  return undefined
}

export function validatePriorityClass(pc: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const name = pc.metadata.name ?? ''
  if (name.startsWith(SYSTEM_PREFIX)) {
    const problem = systemClassProblem(name, pc)
    if (problem)
      errs.push(
        forbiddenField(
          fieldPath('metadata').child('name'),
          `priority class names with '${SYSTEM_PREFIX}' prefix are reserved for system use only. error: ${problem}`,
        ),
      )
  } else if (value(pc) > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(forbiddenField(fieldPath('value'), `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`))
  }
  const policy = pc['preemptionPolicy']
  if (typeof policy === 'string') {
    if (policy === '') errs.push(required(fieldPath('preemptionPolicy')))
    else if (!PREEMPTION_POLICIES.includes(policy)) errs.push(notSupported(fieldPath('preemptionPolicy'), policy, PREEMPTION_POLICIES))
  }
  return errs
}

/** Upstream checks only what an update may not change: the value and the preemption policy. */
export function validatePriorityClassUpdate(pc: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  if (value(pc) !== value(old)) errs.push(forbiddenField(fieldPath('value'), 'may not be changed in an update.'))
  if (pc['preemptionPolicy'] !== old['preemptionPolicy'])
    errs.push(invalid(fieldPath('preemptionPolicy'), pc['preemptionPolicy'] ?? null, 'field is immutable'))
  return errs
}

/** scheduling/v1 default: a class preempts lower ones unless it says Never. */
export function applyPriorityClassDefaults(pc: KubeObject): void {
  if (pc['preemptionPolicy'] === undefined || pc['preemptionPolicy'] === null) pc['preemptionPolicy'] = 'PreemptLowerPriority'
}
