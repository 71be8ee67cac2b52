/**
 * DenyServiceExternalIPs: no new `spec.externalIPs` on a Service; an
 * update may keep or drop the addresses it already has.
 */
import type { ValidatingAdmission } from '../validating.js'
import { isResource, on, refuse, specOf } from './pods.js'

const externalIPs = (obj: unknown): string[] => {
  const ips = specOf(obj)['externalIPs']
  return Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string') : []
}

export const denyServiceExternalIPs: ValidatingAdmission = {
  name: 'DenyServiceExternalIPs',
  handles: on('CREATE', 'UPDATE'),
  validate(a) {
    if (!isResource(a, '', 'services') || a.subresource || !a.object) return
    const wanted = externalIPs(a.object)
    if (wanted.length === 0) return
    const had = new Set(a.operation === 'UPDATE' ? externalIPs(a.oldObject) : [])
    if (a.operation === 'UPDATE' && wanted.every((ip) => had.has(ip))) return
    throw refuse(a, 'use of external IPs is denied by admission control')
  },
}
