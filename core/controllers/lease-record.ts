/**
 * Reading and writing the spec of a coordination.k8s.io/v1 Lease as
 * upstream's lease lock does: MicroTime stamps (microseconds, UTC) and
 * whole-second durations.
 */
import { record, text } from '../resources/columns/values.js'
import type { KubeObject } from '../machinery/object.js'

export interface LeaseRecord {
  holderIdentity: string
  leaseDurationSeconds: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions: number
}

/** A metav1.MicroTime: RFC 3339 with six fractional digits, as Go writes it. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

export function leaseRecord(lease: KubeObject): LeaseRecord {
  const spec = record(lease['spec'])
  const duration = spec['leaseDurationSeconds']
  const transitions = spec['leaseTransitions']
  const acquireTime = text(spec['acquireTime'])
  const renewTime = text(spec['renewTime'])
  return {
    holderIdentity: text(spec['holderIdentity']),
    leaseDurationSeconds: typeof duration === 'number' ? duration : 0,
    ...(acquireTime ? { acquireTime } : {}),
    ...(renewTime ? { renewTime } : {}),
    leaseTransitions: typeof transitions === 'number' ? transitions : 0,
  }
}

/** When the holder's renewal runs out, by the lease's own clock fields (ms since the epoch); 0 when never renewed. */
export function leaseExpiry(lease: KubeObject): number {
  const rec = leaseRecord(lease)
  const renewed = rec.renewTime ? Date.parse(rec.renewTime) : NaN
  return Number.isNaN(renewed) ? 0 : renewed + rec.leaseDurationSeconds * 1000
}

/** `lease` with its spec fields replaced by `rec` (other spec fields, such as a strategy, are kept). */
export function withLeaseRecord(lease: KubeObject, rec: LeaseRecord): KubeObject {
  const spec = { ...record(lease['spec']) }
  for (const field of ['acquireTime', 'renewTime'] as const) delete spec[field]
  return { ...lease, spec: { ...spec, ...rec } }
}
