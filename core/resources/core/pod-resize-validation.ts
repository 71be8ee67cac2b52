/**
 * Upstream's ValidatePodResize (pkg/apis/core/validation, 1.36): what a
 * write through `pods/<name>/resize` may change, once the strategy has kept
 * only the resources (pod-resize.ts). Only cpu and memory are resizable, a
 * request or limit once set stays set, the QoS class stays, containers keep
 * their order and names, and static (mirror) and Windows pods are never
 * resized. The pod as a whole is validated as any pod is (requests within
 * limits and the rest), through `validatePod`.
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { semanticEqual } from '../rbac/semantic-equal.js'
import { objects } from './pod-spec-defaults.js'
import { podQOSClass, quantityValue } from './pod-spec-resources.js'
import { MIRROR_POD_ANNOTATION } from './pod-subresource-meta.js'
import { appendAll } from '../../machinery/append-all.js'

type Obj = Record<string, unknown>

const RESIZABLE_RESOURCES = ['cpu', 'memory']
const ONLY_CPU_AND_MEMORY = 'only cpu and memory resources are mutable'

const specOf = (pod: KubeObject): Obj => (isPlainObject(pod['spec']) ? pod['spec'] : {})
const statusOf = (pod: KubeObject): Obj => (isPlainObject(pod['status']) ? pod['status'] : {})
const mapOf = (v: unknown): Obj => (isPlainObject(v) ? v : {})

/** The pod's QoS class as recorded at creation, computed when it was never recorded (upstream's GetPodQOS). */
function recordedQOSClass(pod: KubeObject): string {
  const recorded = statusOf(pod)['qosClass']
  return typeof recorded === 'string' && recorded ? recorded : podQOSClass(specOf(pod))
}

/**
 * Whether the pod's node reports the resources of its running containers
 * (upstream's isPodResizeRequestSupported, for nodes older than in-place
 * resize): the first running container decides; with none running, yes.
 */
function nodeSupportsResize(pod: KubeObject): boolean {
  const running = objects(statusOf(pod)['containerStatuses']).find((s) => isPlainObject(mapOf(s['state'])['running']))
  return running === undefined || running['resources'] !== undefined
}

/** Whether a request or limit the old list names is missing from the new one. */
function resourcesRemoved(next: unknown, old: unknown): boolean {
  const kept = mapOf(next)
  return Object.keys(mapOf(old)).some((name) => !(name in kept))
}

/**
 * `list` with its cpu and memory put back to `old`'s (upstream's
 * dropCPUMemoryUpdates); any other resource left as written, spelled as
 * `old` spells it when the amounts are equal (quantities compare by value).
 */
function withStoredCPUAndMemory(list: unknown, old: unknown): Obj | undefined {
  if (!isPlainObject(list) && !isPlainObject(old)) return undefined
  const stored = mapOf(old)
  const out: Obj = {}
  for (const [name, quantity] of Object.entries(mapOf(list))) {
    if (RESIZABLE_RESOURCES.includes(name)) continue
    out[name] = name in stored && quantityValue(stored[name]) === quantityValue(quantity) ? stored[name] : quantity
  }
  for (const name of RESIZABLE_RESOURCES) if (name in stored) out[name] = stored[name]
  return out
}

/** A resources block with only its cpu and memory changes undone; claims are not carried (as upstream rebuilds it). */
function undoCPUAndMemory(resources: unknown, old: unknown): Obj {
  const out: Obj = {}
  const limits = withStoredCPUAndMemory(mapOf(resources)['limits'], mapOf(old)['limits'])
  const requests = withStoredCPUAndMemory(mapOf(resources)['requests'], mapOf(old)['requests'])
  if (limits) out['limits'] = limits
  if (requests) out['requests'] = requests
  return out
}

/** A container with only its cpu and memory changes undone (upstream's dropCPUMemoryResourcesFromContainer). */
function withoutCPUAndMemoryChanges(container: Obj, old: Obj): Obj {
  return { ...container, resources: undoCPUAndMemory(container['resources'], old['resources']) }
}

/** upstream's validateContainerResize: a resize never removes a request or a limit. */
function validateContainerResize(next: Obj, old: Obj, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const [resources, oldResources] = [mapOf(next['resources']), mapOf(old['resources'])]
  if (resourcesRemoved(resources['requests'], oldResources['requests'])) errs.push(forbiddenField(path.child('requests'), 'resource requests cannot be removed'))
  if (resourcesRemoved(resources['limits'], oldResources['limits'])) errs.push(forbiddenField(path.child('limits'), 'resource limits cannot be removed'))
  return errs
}

/** Containers neither added, removed, renamed nor reordered; an error per list and position that is. */
function validateContainerOrder(spec: Obj, oldSpec: Obj): FieldError[] {
  const errs: FieldError[] = []
  for (const list of ['containers', 'initContainers'] as const) {
    const [next, old] = [objects(spec[list]), objects(oldSpec[list])]
    const path = fieldPath('spec').child(list)
    if (next.length !== old.length) {
      errs.push(forbiddenField(path, `${list} may not be added or removed on resize`))
      continue
    }
    old.forEach((c, i) => {
      if (next[i]?.['name'] !== c['name']) errs.push(forbiddenField(path.index(i).child('name'), `${list} may not be renamed or reordered on resize`))
    })
  }
  return errs
}

const hasPodLevelResources = (spec: Obj): boolean => {
  const resources = mapOf(spec['resources'])
  return Object.keys(mapOf(resources['requests'])).length + Object.keys(mapOf(resources['limits'])).length > 0
}

/**
 * Pod-level resources resize as containers do (upstream's
 * validatePodLevelResourcesResize): cpu and memory only, nothing removed.
 * Undoes the cpu and memory change in `munged` for the final comparison.
 */
function validatePodLevelResize(spec: Obj, oldSpec: Obj, munged: Obj): FieldError[] {
  const path = fieldPath('spec').child('resources')
  const [resources, oldResources] = [spec['resources'], oldSpec['resources']]
  if (isPlainObject(oldResources) && !isPlainObject(resources)) return [forbiddenField(path, 'pod-level resources cannot be removed')]
  const errs: FieldError[] = []
  if (resourcesRemoved(mapOf(resources)['requests'], mapOf(oldResources)['requests']))
    errs.push(forbiddenField(path.child('requests'), 'pod-level resource requests cannot be removed'))
  if (resourcesRemoved(mapOf(resources)['limits'], mapOf(oldResources)['limits']))
    errs.push(forbiddenField(path.child('limits'), 'pod-level resource limits cannot be removed'))
  const undone = { ...mapOf(resources), ...undoCPUAndMemory(resources, oldResources) }
  munged['resources'] = undone
  if (!semanticEqual(undone, oldResources)) errs.push(forbiddenField(fieldPath('spec'), `${ONLY_CPU_AND_MEMORY} at pod-level`))
  return errs
}

/** Init containers: cpu and memory only; a run-to-completion one with a RestartContainer policy not at all. */
function validateInitContainersResize(spec: Obj, oldSpec: Obj, munged: Obj): FieldError[] {
  const errs: FieldError[] = []
  const old = objects(oldSpec['initContainers'])
  munged['initContainers'] = objects(spec['initContainers']).map((c, i) => {
    const before = old[i] ?? {}
    const path = fieldPath('spec').child('initContainers').index(i)
    const undone = withoutCPUAndMemoryChanges(c, before)
    if (!semanticEqual(undone, before)) errs.push(forbiddenField(path, 'only cpu and memory resources for init or sidecar containers are mutable'))
    const sidecar = c['restartPolicy'] === 'Always'
    const restarts = objects(undone['resizePolicy']).some((p) => p['restartPolicy'] === 'RestartContainer')
    if (!semanticEqual(c, before) && !sidecar && restarts)
      errs.push(forbiddenField(path, 'non-sidecar init containers with a resize policy of RestartContainer cannot be resized'))
    return undone
  })
  return errs
}

/**
 * The errors of a resize from `old` to `pod`. `validatePod` gives the
 * pod's own validation; a static or Windows pod is refused with one error
 * alone, as upstream returns before anything else.
 */
export function validatePodResize(pod: KubeObject, old: KubeObject, validatePod: () => FieldError[]): FieldError[] {
  const root = fieldPath('')
  if (old.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return [forbiddenField(root, 'static pods cannot be resized')]
  if (mapOf(specOf(old)['os'])['name'] === 'windows') return [forbiddenField(root, 'windows pods cannot be resized')]

  const errs = validatePod()
  const [spec, oldSpec] = [specOf(pod), specOf(old)]
  const specPath = fieldPath('spec')
  // The value named is the pod's recorded class (its status, which a resize never writes), as upstream names it.
  if (recordedQOSClass(old) !== podQOSClass(spec))
    errs.push(invalid(specPath, statusOf(pod)['qosClass'] ?? '', 'Pod QOS Class may not change as a result of resizing'))
  if (!nodeSupportsResize(old)) errs.push(forbiddenField(specPath, 'Pod running on node without support for resize'))

  const munged = structuredClone(spec)
  if (hasPodLevelResources(oldSpec) || hasPodLevelResources(spec)) appendAll(errs, validatePodLevelResize(spec, oldSpec, munged))
  if (objects(statusOf(old)['nodeAllocatableResourceClaimStatuses']).length)
    errs.push(forbiddenField(specPath, 'pods with node allocatable resource claims cannot be resized'))

  const order = validateContainerOrder(spec, oldSpec)
  if (order.length) return [...errs, ...order]

  for (const list of ['initContainers', 'containers'] as const) {
    const old = objects(oldSpec[list])
    objects(spec[list]).forEach((c, i) => appendAll(errs, validateContainerResize(c, old[i] ?? {}, specPath.child(list).index(i).child('resources'))))
  }
  const oldContainers = objects(oldSpec['containers'])
  munged['containers'] = objects(spec['containers']).map((c, i) => {
    const undone = withoutCPUAndMemoryChanges(c, oldContainers[i] ?? {})
    if (!semanticEqual(undone, oldContainers[i])) errs.push(forbiddenField(specPath, ONLY_CPU_AND_MEMORY))
    return undone
  })
  if (spec['initContainers'] !== undefined) appendAll(errs, validateInitContainersResize(spec, oldSpec, munged))
  if (errs.length) return errs
  // Anything else that differs (the strategy keeps it as stored, so only a write it let through whole).
  return semanticEqual(munged, oldSpec) ? [] : [forbiddenField(specPath, ONLY_CPU_AND_MEMORY)]
}
