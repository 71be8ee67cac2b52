/**
 * `<resource>/scale`: a workload's replicas seen as an autoscaling/v1 Scale,
 * for `kubectl scale` and autoscalers. Reads spec.replicas, status.replicas
 * and the selector; a write changes spec.replicas alone, through the
 * resource's own update (so its validation and generation rules apply).
 */
import { badRequest } from '../http/status-error.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../resources/object.js'
import { fieldPath, invalid, invalidError } from '../validation/field.js'
import { labelSelectorFromObject, type LabelSelectorObject } from './label-selector.js'
import type { RequestContext } from './request-context.js'
import type { ResourceStore } from './store.js'

const SCALE_API_VERSION = 'autoscaling/v1'

function replicasAt(obj: KubeObject, half: 'spec' | 'status'): number {
  const part = obj[half]
  const n = isPlainObject(part) ? part['replicas'] : undefined
  return typeof n === 'number' ? n : 0
}

/**
 * The selector as upstream prints it. The core group's one scalable resource
 * (ReplicationController) selects with a plain label map; the others with a
 * metav1.LabelSelector.
 */
function selectorText(entry: ResourceEntry, obj: KubeObject): string {
  const spec = obj['spec']
  const selector = isPlainObject(spec) ? spec['selector'] : undefined
  if (entry.group === '') {
    if (!isPlainObject(selector)) return ''
    return Object.keys(selector)
      .sort()
      .map((k) => `${k}=${String(selector[k])}`)
      .join(',')
  }
  return labelSelectorFromObject(isPlainObject(selector) ? (selector as LabelSelectorObject) : undefined).toString()
}

/** The Scale of one stored object. */
export function scaleOf(entry: ResourceEntry, obj: KubeObject): KubeObject {
  const m = obj.metadata
  const metadata: KubeObject['metadata'] = { name: m.name }
  if (m.namespace) metadata.namespace = m.namespace
  if (m.uid) metadata.uid = m.uid
  if (m.resourceVersion) metadata.resourceVersion = m.resourceVersion
  if (m.creationTimestamp) metadata.creationTimestamp = m.creationTimestamp
  const replicas = replicasAt(obj, 'spec')
  const status: Record<string, unknown> = { replicas: replicasAt(obj, 'status') }
  const selector = selectorText(entry, obj)
  if (selector) status['selector'] = selector
  // autoscaling/v1 omits a zero spec.replicas.
  return { kind: 'Scale', apiVersion: SCALE_API_VERSION, metadata, spec: replicas ? { replicas } : {}, status }
}

/** The replicas a Scale body asks for, refused as upstream's ValidateScale does. */
function requestedReplicas(body: unknown, name: string): { replicas: number; resourceVersion?: string } {
  if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON or YAML object')
  if (body['kind'] !== undefined && body['kind'] !== 'Scale')
    throw badRequest(`the kind in the data (${String(body['kind'])}) does not match the expected kind (Scale)`)
  const spec = body['spec']
  const raw = isPlainObject(spec) ? spec['replicas'] : undefined
  if (raw !== undefined && raw !== null && (typeof raw !== 'number' || !Number.isInteger(raw)))
    throw badRequest(`json: cannot unmarshal ${typeof raw} into Go struct field ScaleSpec.spec.replicas of type int32`)
  const replicas = typeof raw === 'number' ? raw : 0
  if (replicas < 0)
    throw invalidError('autoscaling', 'Scale', name, [
      invalid(fieldPath('spec').child('replicas'), replicas, 'must be greater than or equal to 0'),
    ])
  const meta = body['metadata']
  const rv = isPlainObject(meta) ? meta['resourceVersion'] : undefined
  return typeof rv === 'string' && rv ? { replicas, resourceVersion: rv } : { replicas }
}

export async function getScale(store: ResourceStore, namespace: string, name: string): Promise<KubeObject> {
  return scaleOf(store.entry, await store.get(namespace, name))
}

/**
 * Writes spec.replicas from `next(currentScale)` (a PUT's body, or the
 * current Scale patched). A resourceVersion in the Scale is a precondition
 * on the object, as upstream copies it over.
 */
export async function updateScale(
  store: ResourceStore,
  namespace: string,
  name: string,
  next: (current: KubeObject) => unknown,
  ctx: RequestContext,
): Promise<KubeObject> {
  const updated = await store.update(
    namespace,
    name,
    (current) => {
      const wanted = requestedReplicas(next(scaleOf(store.entry, current)), name)
      const spec = isPlainObject(current['spec']) ? current['spec'] : {}
      current['spec'] = { ...spec, replicas: wanted.replicas }
      if (wanted.resourceVersion) current.metadata.resourceVersion = wanted.resourceVersion
      return current
    },
    ctx,
  )
  return scaleOf(store.entry, updated)
}
