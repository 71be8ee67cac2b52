/**
 * LimitPodHardAntiAffinityTopology: a pod's required anti-affinity terms
 * may only use the `kubernetes.io/hostname` topology key.
 */
import { forbidden } from '../../machinery/status-error.js'
import { isPlainObject } from '../../machinery/object.js'
import type { ValidatingAdmission } from '../validating.js'
import { objects, on, podSpecOf } from './pods.js'

const HOSTNAME = 'kubernetes.io/hostname'

export const limitPodHardAntiAffinityTopology: ValidatingAdmission = {
  name: 'LimitPodHardAntiAffinityTopology',
  handles: on('CREATE', 'UPDATE'),
  validate(a) {
    const spec = podSpecOf(a)
    const affinity = spec?.['affinity']
    const anti = isPlainObject(affinity) ? affinity['podAntiAffinity'] : undefined
    if (!isPlainObject(anti)) return
    for (const term of objects(anti['requiredDuringSchedulingIgnoredDuringExecution'])) {
      const key = typeof term['topologyKey'] === 'string' ? term['topologyKey'] : ''
      if (key !== HOSTNAME)
        throw forbidden(
          { group: '', resource: 'pods' },
          a.object?.metadata.name ?? a.name,
          `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${key} but only key ${HOSTNAME} is allowed`,
        )
    }
  },
}
