/**
 * ExtendedResourceToleration: a pod that requests an extended resource
 * (`example.com/gpu`) tolerates the `NoSchedule` taint of that name, with
 * which nodes offering it are kept for the pods that need it.
 */
import { isPlainObject } from '../../machinery/object.js'
import { isQualifiedName } from '../../machinery/names.js'
import type { MutatingAdmission } from '../mutating.js'
import { objects, on, podSpecOf } from './pods.js'
import { sameToleration } from './tolerations.js'

/** Not a native resource (no `/`, or in a `kubernetes.io` domain), not a quota's `requests.` name, and a valid one once quota prefixes it. */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false
  return isQualifiedName(`requests.${name}`).length === 0
}

export const extendedResourceToleration: MutatingAdmission = {
  name: 'ExtendedResourceToleration',
  handles: on('CREATE', 'UPDATE'),
  admit(a) {
    const spec = podSpecOf(a)
    if (!spec) return
    const names = new Set<string>()
    for (const c of [...objects(spec['containers']), ...objects(spec['initContainers'])]) {
      const requests = isPlainObject(c['resources']) ? c['resources']['requests'] : undefined
      if (isPlainObject(requests)) for (const name of Object.keys(requests)) if (isExtendedResourceName(name)) names.add(name)
    }
    for (const key of [...names].sort()) {
      const wanted = { key, operator: 'Exists', effect: 'NoSchedule' }
      const tolerations = objects(spec['tolerations'])
      const same = tolerations.findIndex((t) => sameToleration(t, wanted))
      if (same >= 0 && tolerations[same]?.['tolerationSeconds'] === undefined) continue
      spec['tolerations'] = same >= 0 ? tolerations.map((t, i) => (i === same ? wanted : t)) : [...tolerations, wanted]
    }
  },
}
