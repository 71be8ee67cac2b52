/**
 * A pod's graceful deletion (upstream's pod strategy CheckGracefulDelete): a
 * pod on a node gets time to stop its containers, by default its
 * terminationGracePeriodSeconds; a pod never scheduled, or already finished,
 * has nothing to stop and goes at once.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

/** Upstream's default terminationGracePeriodSeconds. */
const DEFAULT_GRACE_PERIOD_SECONDS = 30

export function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {}
  const status = isPlainObject(pod['status']) ? pod['status'] : {}
  const own = spec['terminationGracePeriodSeconds']
  let period = requested ?? (typeof own === 'number' ? own : DEFAULT_GRACE_PERIOD_SECONDS)
  if (!spec['nodeName']) period = 0
  if (status['phase'] === 'Failed' || status['phase'] === 'Succeeded') period = 0
  // A negative period is one second, the shortest graceful deletion.
  return period < 0 ? 1 : period
}
