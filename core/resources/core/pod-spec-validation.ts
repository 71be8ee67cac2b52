/**
 * upstream's ValidatePodSpec and ValidatePodTemplateSpec: what any pod spec
 * must satisfy, whether a pod's own or a template a controller stamps pods
 * from (every container's image included). A pod's containers additionally
 * keep their image free of surrounding whitespace (`validatePodOnlyInSteps`), a
 * check upstream leaves templates without, for the tools that write a
 * blank image into a template to be filled in later.
 */
import { duplicate, type FieldError, type FieldPath, forbiddenField, invalid, notSupported, required } from '../../machinery/field.js'
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/names.js'
import { validateAnnotations, validateLabels } from '../../validation/object-meta.js'
import { isPlainObject } from '../../machinery/object.js'
import { imageWhitespaceErrors, type PodSpecValidationOptions, validateContainerInSteps, validateIds } from './pod-spec-containers.js'
import { objects } from './pod-spec-defaults.js'
import { validateVolumesInSteps } from './pod-spec-volumes.js'
import { appendAll, appendAllInSteps } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

export type { PodSpecValidationOptions } from './pod-spec-containers.js'

type Obj = Record<string, unknown>

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never']
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']
const MAX_INT32 = 2147483647

/** The container lists, in upstream's order (containers, init, ephemeral), with the kind its rules take. */
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const
const CONTAINER_KINDS = { containers: 'container', initContainers: 'init', ephemeralContainers: 'ephemeral' } as const

function* validateNames(spec: Obj, path: FieldPath): Checkpointed<FieldError[]> {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  for (const key of CONTAINER_LISTS) {
    const list = objects(spec[key])
    for (let i = 0; i < list.length; i++) {
      if (checkpointDue()) yield
      const c = list[i] as Obj
      const at = path.child(key).index(i).child('name')
      const name = typeof c['name'] === 'string' ? c['name'] : ''
      if (!name) {
        errs.push(required(at))
        continue
      }
      for (const msg of isDNS1123Label(name)) errs.push(invalid(at, name, msg))
      if (seen.has(name)) errs.push(duplicate(at, name))
      seen.add(name)
    }
  }
  return errs
}


function validateEnum(value: unknown, path: FieldPath, allowed: string[]): FieldError[] {
  if (!value) return [required(path)]
  return allowed.includes(String(value)) ? [] : [notSupported(path, value, allowed)]
}

function validateNameField(spec: Obj, key: string, path: FieldPath, check: (v: string) => string[]): FieldError[] {
  const v = spec[key]
  return typeof v === 'string' && v ? check(v).map((msg) => invalid(path.child(key), v, msg)) : []
}

/** upstream's ValidatePodSpec, in checkpointed steps: a spec's lists are as long as a body holds. */
export function* validatePodSpecInSteps(value: unknown, path: FieldPath, opts: PodSpecValidationOptions = {}): Checkpointed<FieldError[]> {
  const spec = isPlainObject(value) ? value : {}
  const { names: volumes, errs } = yield* validateVolumesInSteps(spec['volumes'], path.child('volumes'))
  if (!Array.isArray(spec['containers']) || !spec['containers'].some(isPlainObject)) errs.push(required(path.child('containers')))
  yield* appendAllInSteps(errs, yield* validateNames(spec, path))
  for (const key of CONTAINER_LISTS) {
    const list = objects(spec[key])
    for (let i = 0; i < list.length; i++) {
      yield* appendAllInSteps(errs, yield* validateContainerInSteps(list[i] as Obj, path.child(key).index(i), volumes, opts, CONTAINER_KINDS[key]))
      if (checkpointDue()) yield
    }
  }
  appendAll(errs, validateEnum(spec['restartPolicy'], path.child('restartPolicy'), RESTART_POLICIES))
  appendAll(errs, validateEnum(spec['dnsPolicy'], path.child('dnsPolicy'), DNS_POLICIES))
  if (spec['dnsPolicy'] === 'None' && !isPlainObject(spec['dnsConfig']))
    errs.push(required(path.child('dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'))
  appendAll(errs, validateLabels(spec['nodeSelector'], path.child('nodeSelector')))
  const sc = spec['securityContext']
  if (isPlainObject(sc)) {
    appendAll(errs, validateIds(sc, ['runAsUser', 'runAsGroup', 'fsGroup'], path.child('securityContext')))
    const groups = Array.isArray(sc['supplementalGroups']) ? (sc['supplementalGroups'] as unknown[]) : []
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]
      if (typeof g === 'number' && (g < 0 || g > MAX_INT32))
        errs.push(invalid(path.child('securityContext').child('supplementalGroups').index(i), g, 'must be between 0 and 2147483647, inclusive'))
      if (checkpointDue()) yield
    }
  }
  appendAll(errs, validateNameField(spec, 'serviceAccountName', path, isDNS1123Subdomain))
  appendAll(errs, validateNameField(spec, 'nodeName', path, isDNS1123Subdomain))
  const deadline = spec['activeDeadlineSeconds']
  if (typeof deadline === 'number' && (deadline < 1 || deadline > MAX_INT32))
    errs.push(invalid(path.child('activeDeadlineSeconds'), deadline, 'must be between 1 and 2147483647, inclusive'))
  appendAll(errs, validateNameField(spec, 'hostname', path, isDNS1123Label))
  appendAll(errs, validateNameField(spec, 'subdomain', path, isDNS1123Label))
  return errs
}

/**
 * What a pod needs beyond its spec's rules: images without leading or
 * trailing whitespace in its containers and init containers (its ephemeral
 * containers meet the rule with the spec's).
 */
export function* validatePodOnlyInSteps(spec: unknown, path: FieldPath): Checkpointed<FieldError[]> {
  if (!isPlainObject(spec)) return []
  const errs: FieldError[] = []
  for (const key of ['containers', 'initContainers'] as const) {
    const list = objects(spec[key])
    for (let i = 0; i < list.length; i++) {
      appendAll(errs, imageWhitespaceErrors(list[i] as Obj, path.child(key).index(i)))
      if (checkpointDue()) yield
    }
  }
  return errs
}

/** A template's labels, annotations and spec, in checkpointed steps; templates never carry ephemeral containers. */
export function* validatePodTemplateSpecInSteps(template: unknown, path: FieldPath, opts: PodSpecValidationOptions = {}): Checkpointed<FieldError[]> {
  if (!isPlainObject(template)) return yield* validatePodSpecInSteps({}, path.child('spec'), opts)
  const meta = isPlainObject(template['metadata']) ? template['metadata'] : {}
  // Upstream names a template's metadata fields without `metadata`: template.labels.
  const errs = validateLabels(meta['labels'], path.child('labels'))
  appendAll(errs, validateAnnotations(meta['annotations'], path.child('annotations')))
  yield* appendAllInSteps(errs, yield* validatePodSpecInSteps(template['spec'], path.child('spec'), opts))
  const spec = template['spec']
  if (isPlainObject(spec) && objects(spec['ephemeralContainers']).length)
    errs.push(forbiddenField(path.child('spec').child('ephemeralContainers'), 'ephemeral containers not allowed in pod template'))
  return errs
}
