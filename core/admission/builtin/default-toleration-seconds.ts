/**
 * DefaultTolerationSeconds: a pod that does not tolerate the NoExecute
 * taints of an unready or unreachable node gets a toleration of each for
 * `--default-not-ready-toleration-seconds` and
 * `--default-unreachable-toleration-seconds` (300 each by default), so its
 * eviction from a failing node waits that long.
 */
import type { MutatingAdmission } from '../mutating.js'
import { objects, on, podSpecOf } from './pods.js'

export const DEFAULT_TOLERATION_SECONDS = 300

export interface TolerationSeconds {
  notReady?: number
  unreachable?: number
}

/** Whether a toleration covers the NoExecute taint `key`: an empty key or effect matches any. */
const tolerates = (t: Record<string, unknown>, key: string): boolean =>
  (!t['key'] || t['key'] === key) && (!t['effect'] || t['effect'] === 'NoExecute')

export function defaultTolerationSeconds(seconds: TolerationSeconds = {}): MutatingAdmission {
  const defaults = [
    { key: 'node.kubernetes.io/not-ready', seconds: seconds.notReady ?? DEFAULT_TOLERATION_SECONDS },
    { key: 'node.kubernetes.io/unreachable', seconds: seconds.unreachable ?? DEFAULT_TOLERATION_SECONDS },
  ]
  return {
    name: 'DefaultTolerationSeconds',
    handles: on('CREATE', 'UPDATE'),
    admit(a) {
      const spec = podSpecOf(a)
      if (!spec) return
      const tolerations = objects(spec['tolerations'])
      const missing = defaults.filter(({ key }) => !tolerations.some((t) => tolerates(t, key)))
      if (missing.length === 0) return
      for (const { key, seconds: s } of missing) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s })
      spec['tolerations'] = tolerations
    },
  }
}
