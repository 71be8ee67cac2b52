/**
 * `pods/<name>/ephemeralcontainers` (upstream's podEphemeralContainersStrategy),
 * what `kubectl debug` writes: an update takes the written pod's
 * spec.ephemeralContainers alone, everything else staying as stored; the
 * ephemeral containers already there may be neither removed nor changed,
 * the new ones are validated with the rest of the pod, and a static (mirror)
 * pod takes none.
 */
import { type FieldError, fieldPath, forbiddenField, notFoundField } from '../../machinery/field.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { StrategyContext, SubresourceEntry } from '../catalogue.js'
import { semanticEqual } from '../rbac/semantic-equal.js'
import { MIRROR_POD_ANNOTATION, storedPodWithRequestIdentity } from './pod-subresource-meta.js'

/** What an ephemeral container may set (upstream's allow list): no ports, probes, lifecycle or resources. */
const ALLOWED_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'env',
  'envFrom',
  'volumeMounts',
  'volumeDevices',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
])
const FORBIDDEN_TEXT = 'cannot be set for an Ephemeral Container'

/** Go's zero value: what defaulting leaves in a field nobody set (`resources: {}`). */
const isZero = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.values(v).every(isZero))

/** Upstream's validateEphemeralContainers rules beyond those every container shares. */
function validateEphemeralOnly(pod: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const path = fieldPath('spec').child('ephemeralContainers')
  const regular = new Set(
    ['containers', 'initContainers'].flatMap((list) => {
      const items = specOf(pod)[list]
      return Array.isArray(items) ? items.filter(isPlainObject).map((c) => String(c['name'])) : []
    }),
  )
  ephemeralOf(pod).forEach((c, i) => {
    const at = path.index(i)
    for (const [field, value] of Object.entries(c))
      if (!ALLOWED_FIELDS.has(field) && !isZero(value))
        errs.push(forbiddenField(at.child(field), FORBIDDEN_TEXT))
    const mounts = Array.isArray(c['volumeMounts']) ? c['volumeMounts'].filter(isPlainObject) : []
    mounts.forEach((m, j) => {
      if (typeof m['subPath'] === 'string' && m['subPath']) errs.push(forbiddenField(at.child('volumeMounts').index(j).child('subPath'), FORBIDDEN_TEXT))
    })
    const target = c['targetContainerName']
    if (typeof target === 'string' && target && !regular.has(target)) errs.push(notFoundField(at.child('targetContainerName'), target))
  })
  return errs
}

type Obj = Record<string, unknown>
const specOf = (pod: KubeObject): Obj => (isPlainObject(pod['spec']) ? pod['spec'] : {})
const ephemeralOf = (pod: KubeObject): Obj[] => {
  const list = specOf(pod)['ephemeralContainers']
  return Array.isArray(list) ? list.filter(isPlainObject) : []
}

/** The stored pod with the written one's ephemeral containers (and its identity, so a stale write still conflicts). */
function narrowUpdate(obj: KubeObject, old: KubeObject): KubeObject {
  const out = storedPodWithRequestIdentity(obj, old)
  const spec = isPlainObject(out['spec']) ? out['spec'] : (out['spec'] = {})
  const sent = specOf(obj)['ephemeralContainers']
  if (sent === undefined) delete spec['ephemeralContainers']
  else spec['ephemeralContainers'] = sent
  return out
}

/** Upstream's ValidatePodEphemeralContainersUpdate, beside the pod's own validation (`validatePod`). */
function validateUpdate(validatePod: (pod: KubeObject, ctx: StrategyContext) => FieldError[]) {
  return (obj: KubeObject, old: KubeObject, ctx: StrategyContext): FieldError[] => {
    if (old.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return [forbiddenField(fieldPath(''), 'static pods do not support ephemeral containers')]
    const errs = [...validatePod(obj, ctx), ...validateEphemeralOnly(obj)]
    const path = fieldPath('spec').child('ephemeralContainers')
    const written = new Map(ephemeralOf(obj).map((c) => [String(c['name']), c]))
    for (const existing of ephemeralOf(old)) {
      const name = String(existing['name'])
      const now = written.get(name)
      // Upstream ends both messages with a newline (the changed one goes on with a diff of the container).
      if (!now) errs.push(forbiddenField(path, `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`))
      else if (!semanticEqual(existing, now)) errs.push(forbiddenField(path.key(name), `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n`))
    }
    return errs
  }
}

export function ephemeralContainersSubresource(validatePod: (pod: KubeObject, ctx: StrategyContext) => FieldError[]): SubresourceEntry {
  return { name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'], narrowUpdate, validateUpdate: validateUpdate(validatePod) }
}
