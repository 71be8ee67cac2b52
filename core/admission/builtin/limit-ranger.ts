/**
 * LimitRanger (upstream's plugin/pkg/admission/limitranger): on a pod's
 * creation or resize the namespace's LimitRanges give its containers their
 * default limits and requests (mutating phase), then the pod, and a claim on
 * create and update, must fit each range's min, max and maxLimitRequestRatio
 * (validating phase); a refusal is 403 with upstream's messages. Limit
 * ranges are read from a watch-fed index.
 */
import { forbidden } from '../../machinery/status-error.js'
import type { KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import type { ValidatingAdmission } from '../validating.js'
import { aggregate, applyContainerDefaults, claimViolations, podViolations } from './limit-range-checks.js'

type Kind = 'pod' | 'claim'

/**
 * Pods on create and on resize (the one pod update that changes resources),
 * claims on create and update; no other subresource, nothing already being
 * deleted (upstream's SupportsAttributes).
 */
function kindOf(a: AdmissionAttributes): Kind | undefined {
  // The resource first: the objects are read (and, when validating, copied) only for pods and claims.
  if (a.entry.group !== '') return undefined
  const resize = a.entry.resource === 'pods' && a.subresource === 'resize' && a.operation === 'UPDATE'
  if (a.subresource && !resize) return undefined
  let kind: Kind | undefined
  if (a.entry.resource === 'pods') kind = a.operation === 'CREATE' || resize ? 'pod' : undefined
  else if (a.entry.resource === 'persistentvolumeclaims') kind = a.operation === 'CREATE' || a.operation === 'UPDATE' ? 'claim' : undefined
  if (!kind || !a.object || a.oldObject?.metadata.deletionTimestamp) return undefined
  return kind
}

export function limitRanger(limitRanges: (namespace: string) => KubeObject[]): MutatingAdmission & ValidatingAdmission {
  return {
    name: 'LimitRanger',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    admit(a) {
      if (kindOf(a) !== 'pod' || !a.object) return
      for (const range of limitRanges(a.namespace)) applyContainerDefaults(a.object, range)
    },
    validate(a) {
      const kind = kindOf(a)
      if (!kind || !a.object) return
      for (const range of limitRanges(a.namespace)) {
        const errs = kind === 'pod' ? podViolations(range, a.object) : claimViolations(range, a.object)
        if (errs.length) throw forbidden({ group: '', resource: a.entry.resource }, a.name, aggregate(errs))
      }
    },
  }
}
