/**
 * autoscaling/v2 defaults for HorizontalPodAutoscalers (upstream's
 * pkg/apis/autoscaling/v2/defaults.go): at least one replica, a CPU target
 * when no metric is named, and a behavior filled in wherever one is given.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

/** The utilization target of an autoscaler that names no metric. */
export const DEFAULT_CPU_UTILIZATION = 80

type Rules = Record<string, unknown>

/** Scaling up: by 4 pods or 100% every 15 seconds, whichever is more, at once. */
function scaleUpDefaults(): Rules {
  return {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  }
}

/**
 * Scaling down: by up to 100% every 15 seconds. No stabilization window:
 * the controller's own flag decides it when none is given.
 */
function scaleDownDefaults(): Rules {
  return { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] }
}

/** The given rules over the defaults, field by field. */
function withDefaults(given: unknown, defaults: Rules): Rules {
  if (!isPlainObject(given)) return defaults
  const out = { ...defaults }
  for (const key of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (given[key] !== undefined && given[key] !== null) out[key] = given[key]
  }
  return out
}

export function applyHpaV2Defaults(hpa: KubeObject): void {
  const spec = isPlainObject(hpa['spec']) ? hpa['spec'] : (hpa['spec'] = {})
  if (typeof spec['minReplicas'] !== 'number') spec['minReplicas'] = 1
  if (!Array.isArray(spec['metrics']) || spec['metrics'].length === 0)
    spec['metrics'] = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }]
  const behavior = spec['behavior']
  if (isPlainObject(behavior)) {
    behavior['scaleUp'] = withDefaults(behavior['scaleUp'], scaleUpDefaults())
    behavior['scaleDown'] = withDefaults(behavior['scaleDown'], scaleDownDefaults())
  }
}

/** autoscaling/v1 defaults: at least one replica (the CPU target comes with the conversion to v2). */
export function applyHpaV1Defaults(hpa: KubeObject): void {
  const spec = isPlainObject(hpa['spec']) ? hpa['spec'] : (hpa['spec'] = {})
  if (typeof spec['minReplicas'] !== 'number') spec['minReplicas'] = 1
}
