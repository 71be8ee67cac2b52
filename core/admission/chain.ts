/**
 * The admission chain the registry runs (upstream's admission.Interface as
 * the handlers hold it): the mutating plugins in order, then, once the
 * strategy has validated the object, the validating ones in order.
 */
import type { MutatingAdmission } from './mutating.js'
import { mutatingChain } from './mutating.js'
import type { ValidatingAdmission } from './validating.js'
import { validatingChain } from './validating.js'

export interface AdmissionChain {
  readonly mutating: MutatingAdmission
  readonly validating: ValidatingAdmission
}

/** A plugin: mutating, validating, or both (upstream's plugins implement either interface or both). */
export type AdmissionPlugin = MutatingAdmission | ValidatingAdmission | (MutatingAdmission & ValidatingAdmission)

const isMutating = (p: AdmissionPlugin): p is MutatingAdmission => 'admit' in p
const isValidating = (p: AdmissionPlugin): p is ValidatingAdmission => 'validate' in p

/** One chain from plugins in upstream's order: each plugin's mutating half runs in the first phase, its validating half in the second. */
export function admissionChain(plugins: readonly AdmissionPlugin[]): AdmissionChain {
  return {
    mutating: mutatingChain('admission', plugins.filter(isMutating)),
    validating: validatingChain('admission', plugins.filter(isValidating)),
  }
}

/** Two chains one after the other: `first`'s plugins run before `then`'s in each phase. */
export function concatChains(first: AdmissionChain, then: AdmissionChain): AdmissionChain {
  return {
    mutating: mutatingChain('admission', [first.mutating, then.mutating]),
    validating: validatingChain('admission', [first.validating, then.validating]),
  }
}

/** No plugin: what an embedder's chain is unless it gives one. */
export const emptyAdmissionChain: AdmissionChain = admissionChain([])

/** A chain that asks `current()` on each request: for a chain built after the registry that runs it. */
export function lateBoundChain(current: () => AdmissionChain): AdmissionChain {
  return {
    mutating: {
      name: 'admission',
      handles: (operation) => current().mutating.handles(operation),
      admit: (attributes) => current().mutating.admit(attributes),
    },
    validating: {
      name: 'admission',
      handles: (operation) => current().validating.handles(operation),
      validate: (attributes) => current().validating.validate(attributes),
    },
  }
}
