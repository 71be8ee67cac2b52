/**
 * The rules of a HorizontalPodAutoscaler's spec, on its v2 form (upstream's
 * pkg/apis/autoscaling/validation): replica bounds, the scale target, each
 * metric with exactly its own source, and the scaling behavior.
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import { isDNS1123Label, isQualifiedName, isValidPathSegmentName } from '../../machinery/names.js'
import { at, list, record, text } from '../columns/values.js'
import { quantityValue } from '../core/pod-spec-resources.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { appendAll } from '../../machinery/append-all.js'

const MAX_PERIOD_SECONDS = 1800
const MAX_STABILIZATION_WINDOW_SECONDS = 3600

/** Sorted, as upstream lists its string sets. */
const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource']
const SELECT_POLICIES = ['Disabled', 'Max', 'Min']
const POLICY_TYPES = ['Percent', 'Pods']
const TARGET_TYPES = ['Utilization', 'Value', 'AverageValue']

/** The source field of each metric type, in the order upstream looks at them. */
const SOURCE_FIELDS: readonly [type: string, field: string][] = [
  ['Object', 'object'],
  ['External', 'external'],
  ['Pods', 'pods'],
  ['Resource', 'resource'],
  ['ContainerResource', 'containerResource'],
]

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage'])
const STANDARD_RESOURCES = new Set([...STANDARD_CONTAINER_RESOURCES, 'storage', 'pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims'])

function int(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined
}

/** A quantity as upstream's messages show it: the text it was written as. */
function shown(q: unknown): string {
  return String(q)
}

/** Names that become one segment of a URL: the scale target's kind and name, metric names. */
function validatePathSegment(value: string, path: FieldPath, requiredDetail = ''): FieldError[] {
  if (!value) return [required(path, requiredDetail)]
  return isValidPathSegmentName(value).map((msg) => invalid(path, value, msg))
}

export function validateCrossVersionObjectReference(ref: unknown, path: FieldPath): FieldError[] {
  return [...validatePathSegment(text(at(ref, 'kind')), path.child('kind')), ...validatePathSegment(text(at(ref, 'name')), path.child('name'))]
}

function validateMetricTarget(target: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const t = record(target)
  const type = text(t['type'])
  if (!type) errs.push(required(path.child('type'), 'must specify a metric target type'))
  if (!TARGET_TYPES.includes(type)) errs.push(invalid(path.child('type'), type, 'must be either Utilization, Value, or AverageValue'))
  for (const field of ['value', 'averageValue']) {
    if (t[field] !== undefined && !(quantityValue(t[field]) > 0)) errs.push(invalid(path.child(field), shown(t[field]), 'must be positive'))
  }
  const utilization = int(t['averageUtilization'])
  if (utilization !== undefined && utilization < 1) errs.push(invalid(path.child('averageUtilization'), utilization, 'must be greater than 0'))
  return errs
}

function validateMetricIdentifier(metric: unknown, path: FieldPath): FieldError[] {
  return validatePathSegment(text(at(metric, 'name')), path.child('name'), 'must specify a metric name')
}

function validateObjectSource(src: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs = [
    ...validateCrossVersionObjectReference(src['describedObject'], path.child('describedObject')),
    ...validateMetricIdentifier(src['metric'], path.child('metric')),
    ...validateMetricTarget(src['target'], path.child('target')),
  ]
  const target = record(src['target'])
  if (target['value'] === undefined && target['averageValue'] === undefined)
    errs.push(required(path.child('target').child('averageValue'), 'must set either a target value or averageValue'))
  return errs
}

function validateExternalSource(src: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs = [...validateMetricIdentifier(src['metric'], path.child('metric')), ...validateMetricTarget(src['target'], path.child('target'))]
  const target = record(src['target'])
  if (target['value'] === undefined && target['averageValue'] === undefined)
    errs.push(required(path.child('target').child('averageValue'), 'must set either a target value for metric or a per-pod target'))
  if (target['value'] !== undefined && target['averageValue'] !== undefined)
    errs.push(forbiddenField(path.child('target').child('value'), 'may not set both a target value for metric and a per-pod target'))
  return errs
}

function validatePodsSource(src: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs = [...validateMetricIdentifier(src['metric'], path.child('metric')), ...validateMetricTarget(src['target'], path.child('target'))]
  if (at(src, 'target', 'averageValue') === undefined)
    errs.push(required(path.child('target').child('averageValue'), 'must specify a positive target averageValue'))
  return errs
}

/** A resource target is a utilization or a raw average, never both. */
function validateResourceTarget(target: unknown, path: FieldPath): FieldError[] {
  const errs = validateMetricTarget(target, path)
  const t = record(target)
  if (t['averageUtilization'] === undefined && t['averageValue'] === undefined)
    errs.push(required(path.child('averageUtilization'), 'must set either a target raw value or a target utilization'))
  if (t['averageUtilization'] !== undefined && t['averageValue'] !== undefined)
    errs.push(forbiddenField(path.child('averageValue'), 'may not set both a target raw value and a target utilization'))
  return errs
}

function validateResourceSource(src: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (!text(src['name'])) errs.push(required(path.child('name'), 'must specify a resource name'))
  appendAll(errs, validateResourceTarget(src['target'], path.child('target')))
  return errs
}

/** upstream's ValidateContainerResourceName: qualified, and standard for containers when unprefixed. */
function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg))
  if (errs.length > 0 || name.includes('/')) return errs
  if (!STANDARD_RESOURCES.has(name) && !name.startsWith('hugepages-'))
    return [invalid(path, name, 'must be a standard resource type or fully qualified')]
  if (!STANDARD_CONTAINER_RESOURCES.has(name) && !name.startsWith('hugepages-'))
    return [invalid(path, name, 'must be a standard resource for containers')]
  return []
}

function validateContainerResourceSource(src: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const name = text(src['name'])
  if (!name) errs.push(required(path.child('name'), 'must specify a resource name'))
  else appendAll(errs, validateContainerResourceName(name, path.child('name')))
  const container = text(src['container'])
  if (!container) errs.push(required(path.child('container'), 'must specify a container'))
  else appendAll(errs, isDNS1123Label(container).map((msg) => invalid(path.child('container'), container, msg)))
  appendAll(errs, validateResourceTarget(src['target'], path.child('target')))
  return errs
}

const SOURCE_RULES: Record<string, (src: Record<string, unknown>, path: FieldPath) => FieldError[]> = {
  object: validateObjectSource,
  external: validateExternalSource,
  pods: validatePodsSource,
  resource: validateResourceSource,
  containerResource: validateContainerResourceSource,
}

/**
 * One metric: its type names the one source it fills. Only the first source
 * present is checked in depth, and the others are refused, as upstream does.
 */
function validateMetricSpec(metric: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const m = record(metric)
  const type = text(m['type'])
  if (!type) errs.push(required(path.child('type'), 'must specify a metric source type'))
  if (!METRIC_SOURCE_TYPES.includes(type)) errs.push(notSupported(path.child('type'), type, METRIC_SOURCE_TYPES))
  const present = SOURCE_FIELDS.map(([, field]) => field).filter((field) => isPlainObject(m[field]))
  const first = present[0]
  if (first) appendAll(errs, (SOURCE_RULES[first]?.(record(m[first]), path.child(first)) ?? []))
  const expected = SOURCE_FIELDS.find(([t]) => t === type)?.[1]
  if (!expected) errs.push(notSupported(path.child('type'), type, METRIC_SOURCE_TYPES))
  else if (!present.includes(expected)) errs.push(required(path.child(expected), 'must populate information for the given metric source'))
  if (present.length !== 1)
    for (const field of present.filter((f) => f !== expected)) errs.push(forbiddenField(path.child(field), 'must populate the given metric source only'))
  return errs
}

function validateMetrics(metrics: unknown, minReplicas: number | undefined, path: FieldPath): FieldError[] {
  const errs = list(metrics).flatMap((m, i) => validateMetricSpec(m, path.index(i)))
  if (minReplicas === 0) {
    const scalesOnObjects = list(metrics).some((m) => ['Object', 'External'].includes(text(at(m, 'type'))))
    if (!scalesOnObjects) errs.push(forbiddenField(path, 'must specify at least one Object or External metric to support scaling to zero replicas'))
  }
  return errs
}

function validateScalingPolicy(policy: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const p = record(policy)
  const type = text(p['type'])
  if (!POLICY_TYPES.includes(type)) errs.push(notSupported(path.child('type'), type, POLICY_TYPES))
  const value = int(p['value']) ?? 0
  if (value <= 0) errs.push(invalid(path.child('value'), value, 'must be greater than zero'))
  const period = int(p['periodSeconds']) ?? 0
  if (period <= 0) errs.push(invalid(path.child('periodSeconds'), period, 'must be greater than zero'))
  if (period > MAX_PERIOD_SECONDS) errs.push(invalid(path.child('periodSeconds'), period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`))
  return errs
}

function validateScalingRules(rules: unknown, path: FieldPath): FieldError[] {
  if (!isPlainObject(rules)) return []
  const errs: FieldError[] = []
  const window = int(rules['stabilizationWindowSeconds'])
  if (window !== undefined && window < 0)
    errs.push(invalid(path.child('stabilizationWindowSeconds'), window, 'must be greater than or equal to zero'))
  if (window !== undefined && window > MAX_STABILIZATION_WINDOW_SECONDS)
    errs.push(invalid(path.child('stabilizationWindowSeconds'), window, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`))
  const select = rules['selectPolicy']
  if (typeof select === 'string' && !SELECT_POLICIES.includes(select)) errs.push(notSupported(path.child('selectPolicy'), select, SELECT_POLICIES))
  const policies = list(rules['policies'])
  if (policies.length === 0) errs.push(required(path.child('policies'), 'must specify at least one Policy'))
  policies.forEach((p, i) => appendAll(errs, validateScalingPolicy(p, path.child('policies').index(i))))
  return errs
}

/**
 * The lowest minReplicas allowed: 1, or 0 for an autoscaler that already
 * scales to zero (the scale-to-zero feature itself is off, as upstream's
 * default).
 */
function minReplicasLowerBound(old?: KubeObject): number {
  return int(at(old, 'spec', 'minReplicas')) === 0 ? 0 : 1
}

/** The v2 form of an autoscaler; `old` is the stored one on update. */
export function validateHorizontalPodAutoscaler(hpa: KubeObject, old?: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = record(hpa['spec'])
  const path = fieldPath('spec')
  const min = int(spec['minReplicas'])
  const max = int(spec['maxReplicas']) ?? 0
  const bound = minReplicasLowerBound(old)
  if (min !== undefined && min < bound) errs.push(invalid(path.child('minReplicas'), min, `must be greater than or equal to ${bound}`))
  if (max < 1) errs.push(invalid(path.child('maxReplicas'), max, 'must be greater than 0'))
  if (min !== undefined && max < min) errs.push(invalid(path.child('maxReplicas'), max, 'must be greater than or equal to `minReplicas`'))
  appendAll(errs, validateCrossVersionObjectReference(spec['scaleTargetRef'], path.child('scaleTargetRef')))
  appendAll(errs, validateMetrics(spec['metrics'], min, path.child('metrics')))
  const behavior = spec['behavior']
  if (isPlainObject(behavior)) {
    appendAll(errs, validateScalingRules(behavior['scaleUp'], path.child('behavior').child('scaleUp')))
    appendAll(errs, validateScalingRules(behavior['scaleDown'], path.child('behavior').child('scaleDown')))
  }
  return errs
}

/** A client may not write the status on create; the autoscaler controller does. */
export function clearStatus(hpa: KubeObject): void {
  delete hpa['status']
}
