/**
 * `pods/<name>/resize` (upstream's podResizeStrategy), what in-place
 * vertical scaling writes (`kubectl patch pod --subresource=resize`): an
 * update takes each container's and init container's `resources` and
 * `resizePolicy`, and the pod-level `resources`, from the written pod;
 * everything else stays as stored. A write that adds, removes, renames or
 * reorders containers keeps its containers as written, so that validation
 * (pod-resize-validation.ts) refuses it instead of the strategy guessing.
 */
import type { FieldError } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { StrategyContext, SubresourceEntry } from '../catalogue.js'
import { objects } from './pod-spec-defaults.js'
import { validatePodResize } from './pod-resize-validation.js'
import { storedPodWithRequestIdentity } from './pod-subresource-meta.js'

type Obj = Record<string, unknown>

const specOf = (pod: KubeObject): Obj => (isPlainObject(pod['spec']) ? pod['spec'] : {})

/** The fields of a container a resize may write. */
const RESIZABLE = ['resources', 'resizePolicy'] as const

/**
 * The stored containers with the written ones' resizable fields; the
 * written list itself when a name at some position differs (upstream's
 * dropNonResizeUpdatesForContainers).
 */
function withResizedFields(written: unknown, stored: unknown): unknown {
  const sent = objects(written)
  if (sent.length === 0) return written
  const kept = objects(stored)
  if (sent.some((c, i) => c['name'] !== kept[i]?.['name'])) return written
  return kept.map((c, i) => {
    const out = structuredClone(c)
    for (const field of RESIZABLE) {
      const value = sent[i]?.[field]
      if (value === undefined) delete out[field]
      else out[field] = structuredClone(value)
    }
    return out
  })
}

/** Upstream's dropNonResizeUpdates: the stored pod with the written pod's resources. */
export function narrowToResize(obj: KubeObject, old: KubeObject): KubeObject {
  const sent = specOf(obj)
  const stored = specOf(old)
  // Containers added or removed: the written pod goes on whole and validation names the change.
  if (objects(sent['containers']).length !== objects(stored['containers']).length) return obj
  if (objects(sent['initContainers']).length !== objects(stored['initContainers']).length) return obj
  const out = storedPodWithRequestIdentity(obj, old)
  const spec = isPlainObject(out['spec']) ? out['spec'] : (out['spec'] = {})
  for (const list of ['containers', 'initContainers'] as const) {
    const next = withResizedFields(sent[list], stored[list])
    if (next === undefined) delete spec[list]
    else spec[list] = structuredClone(next)
  }
  // Pod-level resources resize in place too (InPlacePodLevelResourcesVerticalScaling, on by default since 1.36).
  if (sent['resources'] === undefined) delete spec['resources']
  else spec['resources'] = structuredClone(sent['resources'])
  return out
}

/** What a writer owns through the subresource (upstream's resetFieldsFilter of the resize strategy). */
const RESIZE_OWNED_FIELDS = [
  ['spec', 'containers', '*', 'resources'],
  ['spec', 'containers', '*', 'resizePolicy'],
  ['spec', 'initContainers', '*', 'resources'],
  ['spec', 'initContainers', '*', 'resizePolicy'],
  ['spec', 'resources'],
]

export function resizeSubresource(validatePod: (pod: KubeObject, ctx: StrategyContext) => FieldError[]): SubresourceEntry {
  return {
    name: 'resize',
    kind: 'Pod',
    verbs: ['get', 'patch', 'update'],
    narrowUpdate: narrowToResize,
    ownedFields: RESIZE_OWNED_FIELDS,
    validateUpdate: (obj, old, ctx) => validatePodResize(obj, old, () => validatePod(obj, ctx)),
  }
}
