/**
 * autoscaling/v1 HorizontalPodAutoscalers are stored as autoscaling/v2, as
 * upstream does: v1's targetCPUUtilizationPercentage is v2's CPU
 * utilization metric; every other metric, the current metrics, the
 * conditions and the behavior travel in v1 as the annotations upstream uses,
 * in the v1 (v2beta1-shaped) metric form, so nothing is lost either way.
 */
import type { LocalVersionConversion } from '../catalogue.js'
import { at, list, record, text } from '../columns/values.js'
import { jsonTooDeepAt } from '../../machinery/limits.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics'
const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics'
const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions'
const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior'
const ANNOTATIONS = [METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION, BEHAVIOR_ANNOTATION]

/** Upstream's utilization target for a v1 object that names none. */
const DEFAULT_CPU_UTILIZATION = 80

type Json = Record<string, unknown>

/** Copies the keys that are set, so that absent fields stay absent. */
function defined(fields: Json): Json {
  const out: Json = {}
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v
  return out
}

function isCpuUtilization(metric: unknown, target: 'target' | 'current'): boolean {
  return (
    text(at(metric, 'type')) === 'Resource' &&
    text(at(metric, 'resource', 'name')) === 'cpu' &&
    at(metric, 'resource', target, 'averageUtilization') !== undefined
  )
}

/**
 * The v1 (annotation) form of each metric source type: v1 field name ->
 * path in the v2 source. `value`/`averageValue`/`averageUtilization` live
 * under `target` in specs and under `current` in statuses.
 */
const METRIC_FIELDS: Readonly<Record<string, readonly [v1: string, v2: string][]>> = {
  Object: [
    ['target', 'describedObject'],
    ['metricName', 'metric.name'],
    ['selector', 'metric.selector'],
    ['Value', 'value'],
    ['averageValue', 'averageValue'],
  ],
  Pods: [
    ['metricName', 'metric.name'],
    ['selector', 'metric.selector'],
    ['AverageValue', 'averageValue'],
  ],
  Resource: [
    ['name', 'name'],
    ['AverageUtilization', 'averageUtilization'],
    ['AverageValue', 'averageValue'],
  ],
  ContainerResource: [
    ['name', 'name'],
    ['container', 'container'],
    ['AverageUtilization', 'averageUtilization'],
    ['AverageValue', 'averageValue'],
  ],
  External: [
    ['metricName', 'metric.name'],
    ['metricSelector', 'metric.selector'],
    ['Value', 'value'],
    ['AverageValue', 'averageValue'],
  ],
}

const MEASURES = new Set(['value', 'averageValue', 'averageUtilization'])

/**
 * A v1 name for a v2 field: measures take the `target`/`current` prefix
 * (`targetAverageValue`, `currentValue`); Object's plain `averageValue`
 * keeps its name, as upstream's v1 types spell it.
 */
function v1Name(v1: string, side: 'target' | 'current'): string {
  return v1.charAt(0) === v1.charAt(0).toUpperCase() ? `${side}${v1}` : v1
}

function v2Path(v2: string, side: 'target' | 'current'): string[] {
  return MEASURES.has(v2) ? [side, v2] : v2.split('.')
}

function setPath(obj: Json, path: string[], value: unknown): void {
  if (value === undefined) return
  let at = obj
  for (const step of path.slice(0, -1)) at = (at[step] ??= {}) as Json
  at[path[path.length - 1]!] = value
}

function sourceName(type: string): string {
  return type.charAt(0).toLowerCase() + type.slice(1)
}

function metricToV1(m: unknown, side: 'target' | 'current'): Json {
  const type = text(at(m, 'type'))
  const fields = METRIC_FIELDS[type]
  if (!fields) return record(m)
  const source = at(m, sourceName(type))
  const out: Json = {}
  for (const [v1, v2] of fields) {
    const value = at(source, ...v2Path(v2, side))
    if (value !== undefined) out[v1Name(v1, side)] = value
  }
  return { type, [sourceName(type)]: out }
}

function metricFromV1(m: unknown, side: 'target' | 'current'): Json {
  const type = text(at(m, 'type'))
  const fields = METRIC_FIELDS[type]
  if (!fields) return record(m)
  const source = at(m, sourceName(type))
  const out: Json = {}
  for (const [v1, v2] of fields) setPath(out, v2Path(v2, side), at(source, v1Name(v1, side)))
  if (side === 'target') {
    // v1 has no target type: it follows from which measure is set.
    const target = record(out['target'])
    const kind = target['averageUtilization'] !== undefined ? 'Utilization' : target['averageValue'] !== undefined ? 'AverageValue' : 'Value'
    out['target'] = { type: kind, ...target }
  }
  return { type, [sourceName(type)]: out }
}

/**
 * An annotation's list or object, or undefined when it holds neither. What
 * it holds goes into the stored object as it is, so a value nested past
 * MAX_NESTING_DEPTH is no more usable than text that is not JSON: every walk
 * over the object would recurse into it (upstream's typed reading keeps
 * only its types' fields, none of them nested so deeply).
 */
function parseAnnotation(annotations: Record<string, string>, key: string): unknown[] | Json | undefined {
  const raw = annotations[key]
  if (raw === undefined || jsonTooDeepAt(raw) !== undefined) return undefined
  try {
    const value: unknown = JSON.parse(raw)
    return Array.isArray(value) || isPlainObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** The stored (v2) form of a v1 object. */
export function hpaV1ToV2(obj: KubeObject): KubeObject {
  const annotations = { ...obj.metadata.annotations }
  const spec = record(obj['spec'])
  const status = record(obj['status'])
  const metrics: unknown[] = []
  if (typeof spec['targetCPUUtilizationPercentage'] === 'number')
    metrics.push(metricFromV1({ type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: spec['targetCPUUtilizationPercentage'] } }, 'target'))
  const other = parseAnnotation(annotations, METRICS_ANNOTATION)
  if (Array.isArray(other)) appendAll(metrics, other.map((m) => metricFromV1(m, 'target')))
  if (metrics.length === 0)
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } })

  const currentMetrics: unknown[] = []
  const current = parseAnnotation(annotations, CURRENT_METRICS_ANNOTATION)
  if (Array.isArray(current)) appendAll(currentMetrics, current.map((m) => metricFromV1(m, 'current')))
  else if (typeof status['currentCPUUtilizationPercentage'] === 'number')
    currentMetrics.push(metricFromV1({ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: status['currentCPUUtilizationPercentage'] } }, 'current'))
  const conditions = parseAnnotation(annotations, CONDITIONS_ANNOTATION)
  const behavior = parseAnnotation(annotations, BEHAVIOR_ANNOTATION)
  for (const key of ANNOTATIONS) delete annotations[key]

  const { targetCPUUtilizationPercentage: _target, ...v2spec } = spec
  const { currentCPUUtilizationPercentage: _current, ...v2status } = status
  const out: KubeObject = {
    ...obj,
    apiVersion: 'autoscaling/v2',
    metadata: withAnnotations(obj, annotations),
    spec: defined({ ...v2spec, metrics, behavior: isPlainObject(behavior) ? behavior : undefined }),
  }
  if (obj['status'] !== undefined)
    out['status'] = defined({
      ...v2status,
      currentMetrics: currentMetrics.length > 0 ? currentMetrics : undefined,
      conditions: Array.isArray(conditions) ? conditions : undefined,
    })
  return out
}

/** The v1 form of a stored (v2) object. */
export function hpaV2ToV1(obj: KubeObject): KubeObject {
  const annotations = { ...obj.metadata.annotations }
  const spec = record(obj['spec'])
  const status = record(obj['status'])
  const metrics = list(spec['metrics'])
  const cpu = metrics.find((m) => isCpuUtilization(m, 'target'))
  const other = metrics.filter((m) => !isCpuUtilization(m, 'target'))
  if (other.length > 0) annotations[METRICS_ANNOTATION] = JSON.stringify(other.map((m) => metricToV1(m, 'target')))
  const currentMetrics = list(status['currentMetrics'])
  if (currentMetrics.length > 0) annotations[CURRENT_METRICS_ANNOTATION] = JSON.stringify(currentMetrics.map((m) => metricToV1(m, 'current')))
  const conditions = list(status['conditions'])
  if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions)
  if (isPlainObject(spec['behavior'])) annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec['behavior'])
  const currentCpu = currentMetrics.find((m) => isCpuUtilization(m, 'current'))

  const { metrics: _metrics, behavior: _behavior, ...v1spec } = spec
  const { currentMetrics: _currentMetrics, conditions: _conditions, ...v1status } = status
  const out: KubeObject = {
    ...obj,
    apiVersion: 'autoscaling/v1',
    metadata: withAnnotations(obj, annotations),
    spec: defined({ ...v1spec, targetCPUUtilizationPercentage: at(cpu, 'resource', 'target', 'averageUtilization') }),
  }
  // v1's two replica counts are plain fields Go always writes: a new autoscaler reads 0 and 0.
  const counts = { currentReplicas: v1status['currentReplicas'] ?? 0, desiredReplicas: v1status['desiredReplicas'] ?? 0 }
  out['status'] = defined({ ...v1status, ...counts, currentCPUUtilizationPercentage: at(currentCpu, 'resource', 'current', 'averageUtilization') })
  return out
}

function withAnnotations(obj: KubeObject, annotations: Record<string, string>): KubeObject['metadata'] {
  const { annotations: _old, ...meta } = obj.metadata
  return Object.keys(annotations).length > 0 ? { ...meta, annotations } : meta
}

export const hpaV1Conversion: LocalVersionConversion = {
  storageVersion: 'autoscaling/v2',
  toStorage: hpaV1ToV2,
  fromStorage: hpaV2ToV1,
}
