/**
 * `<resource>/scale`: a workload's replicas seen as an autoscaling/v1 Scale,
 * for `kubectl scale` and autoscalers. Reads spec.replicas, status.replicas
 * and the selector; a write changes spec.replicas alone, through the
 * resource's own update (so its validation and generation rules apply).
 *
 * A custom resource keeps them where its CRD's `subresources.scale` says
 * (`entry.scalePaths`), read and written as upstream's custom resource scale
 * storage does: dotted field paths, integers and a selector string, a value
 * of another type refused.
 */
import { badRequest, type GroupResource, internalError, notFound, StatusError } from '../machinery/status-error.js'
import type { ResourceEntry, ScalePaths } from '../resources/catalogue.js'
import { nestedInteger, nestedString, ScalePathError, setNested } from '../resources/scale-paths.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { goJsonKind, goPrint } from '../machinery/go-format.js'
import { fieldPath, invalid, invalidError } from '../machinery/field.js'
import { labelSelectorFromObject, type LabelSelectorObject } from '../machinery/label-selector.js'
import type { RequestContext } from './request-context.js'
import type { ResourceStore } from './store.js'

const SCALE_API_VERSION = 'autoscaling/v1'

/** What a Scale shows, wherever the object keeps it. */
interface ScaleValues {
  specReplicas: number
  statusReplicas: number
  selector: string
}

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

/** Go's int32(x) of an int64: the low 32 bits, as a Scale's int32 fields keep them. */
const int32 = (n: number): number => n | 0

/**
 * The Scale values of a custom resource (upstream's scaleFromCustomResource).
 * specReplicas is undefined when the spec path holds nothing; absent status
 * replicas are 0 and an absent selector empty. Throws ScalePathError.
 */
function customScaleValues(obj: KubeObject, paths: ScalePaths): Omit<ScaleValues, 'specReplicas'> & { specReplicas: number | undefined } {
  const spec = nestedInteger(obj, paths.specReplicasPath)
  const status = nestedInteger(obj, paths.statusReplicasPath) ?? 0
  const selector = paths.labelSelectorPath ? (nestedString(obj, paths.labelSelectorPath) ?? '') : ''
  return { specReplicas: spec === undefined ? undefined : int32(spec), statusReplicas: int32(status), selector }
}

/** Runs a scale path read or write; upstream answers its errors (not API statuses) as a 500 with the bare text. */
function readCustomScale<T>(read: () => T): T {
  try {
    return read()
  } catch (err) {
    if (err instanceof ScalePathError) throw new StatusError(500, 'InternalError', err.message)
    throw err
  }
}

// --- the Scale object -------------------------------------------------------------

function scaleObject(obj: KubeObject, values: ScaleValues): KubeObject {
  const m = obj.metadata
  const metadata: KubeObject['metadata'] = { name: m.name }
  if (m.namespace) metadata.namespace = m.namespace
  if (m.uid) metadata.uid = m.uid
  if (m.resourceVersion) metadata.resourceVersion = m.resourceVersion
  if (m.creationTimestamp) metadata.creationTimestamp = m.creationTimestamp
  const status: Record<string, unknown> = { replicas: values.statusReplicas }
  if (values.selector) status['selector'] = values.selector
  // autoscaling/v1 omits a zero spec.replicas.
  const spec = values.specReplicas ? { replicas: values.specReplicas } : {}
  return { kind: 'Scale', apiVersion: SCALE_API_VERSION, metadata, spec, status }
}

/**
 * The Scale of one stored object. For a custom resource an absent spec
 * replicas reads as 0, and a value of the wrong type at a path throws.
 */
export function scaleOf(entry: ResourceEntry, obj: KubeObject): KubeObject {
  const paths = entry.scalePaths
  if (paths) {
    const values = readCustomScale(() => customScaleValues(obj, paths))
    return scaleObject(obj, { ...values, specReplicas: values.specReplicas ?? 0 })
  }
  return scaleObject(obj, {
    specReplicas: replicasAt(obj, 'spec'),
    statusReplicas: replicasAt(obj, 'status'),
    selector: selectorText(entry, obj),
  })
}

/** What Go's decoder says of a Scale whose replicas are no integer; undefined when they are (or are absent). */
export function scaleDecodeError(body: Record<string, unknown>): string | undefined {
  const spec = body['spec']
  const raw = isPlainObject(spec) ? spec['replicas'] : undefined
  if (raw === undefined || raw === null || (typeof raw === 'number' && Number.isInteger(raw))) return undefined
  return `json: cannot unmarshal ${goJsonKind(raw)} into Go struct field ScaleSpec.spec.replicas of type int32`
}

/**
 * A patched Scale whose replicas do not decode, refused as upstream's patch
 * handler refuses it: 422 on the field `patch`, quoting the patched Scale
 * (the patch, for a strategic merge). Anything else (and a PUT's body) passes.
 */
export function patchedScale(result: unknown, ctx: RequestContext): unknown {
  const problem = ctx.patch && isPlainObject(result) ? scaleDecodeError(result) : undefined
  if (!problem || !ctx.patch) return result
  if (!ctx.patch.strategic) throw invalidError('', '', '', [invalid(fieldPath('patch'), JSON.stringify(result), problem)])
  // A strategic merge's result meets upstream's unstructured converter, which words the mismatch its own way.
  const raw = (result as { spec: { replicas: unknown } }).spec.replicas
  const converted = typeof raw === 'number' ? 'cannot convert float64 to int32' : 'unrecognized type: int32'
  throw invalidError('', '', '', [invalid(fieldPath('patch'), goPrint(ctx.patch.sent), converted)])
}

/**
 * A Scale body as upstream's decoder makes it: refused when it names
 * another kind or its replicas are no integer, an empty or missing
 * apiVersion and kind taken as autoscaling/v1's Scale, and nothing kept but
 * a Scale's fields. This is what admission sees of the request.
 */
function decodedScale(store: ResourceStore, body: unknown): KubeObject {
  if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON or YAML object')
  const apiVersion = typeof body['apiVersion'] === 'string' && body['apiVersion'] ? body['apiVersion'] : SCALE_API_VERSION
  const kind = typeof body['kind'] === 'string' && body['kind'] ? body['kind'] : 'Scale'
  const refused = store.otherKindRefusal(apiVersion, kind, { apiVersion: SCALE_API_VERSION, kind: 'Scale' })
  if (refused) throw refused
  const problem = scaleDecodeError(body)
  if (problem) throw badRequest(`Scale in version "v1" cannot be handled as a Scale: ${problem}`)
  const spec = body['spec']
  const replicas = isPlainObject(spec) ? spec['replicas'] : undefined
  const status = isPlainObject(body['status']) ? body['status'] : {}
  const selector = status['selector']
  return {
    apiVersion: SCALE_API_VERSION,
    kind: 'Scale',
    metadata: isPlainObject(body['metadata']) ? (body['metadata'] as KubeObject['metadata']) : {},
    // autoscaling/v1 omits a zero spec.replicas.
    spec: typeof replicas === 'number' && replicas ? { replicas } : {},
    status: {
      replicas: typeof status['replicas'] === 'number' ? status['replicas'] : 0,
      ...(typeof selector === 'string' && selector ? { selector } : {}),
    },
  }
}

/**
 * The replicas (and resourceVersion precondition) of a Scale once admitted,
 * refused as upstream's ValidateScale does for a built-in kind. A custom
 * resource's Scale is not validated as a Scale: the resource's own
 * validation judges the replicas it ends up with.
 */
function admittedReplicas(scale: KubeObject, name: string, validate: boolean): { replicas: number; resourceVersion?: string } {
  // A mutating webhook's or policy's patch that leaves no int32 there does not decode as a Scale.
  const problem = scaleDecodeError(scale)
  if (problem) throw internalError(problem)
  const spec = scale['spec']
  const raw = isPlainObject(spec) ? spec['replicas'] : undefined
  const replicas = typeof raw === 'number' ? raw : 0
  if (validate && replicas < 0)
    throw invalidError('autoscaling', 'Scale', name, [
      invalid(fieldPath('spec').child('replicas'), replicas, 'must be greater than or equal to 0'),
    ])
  const rv = isPlainObject(scale.metadata) ? scale.metadata.resourceVersion : undefined
  return typeof rv === 'string' && rv ? { replicas, resourceVersion: rv } : { replicas }
}

/**
 * What upstream's scale storage names when the object is missing: a
 * Deployment's and a ReplicaSet's answer for their `/scale` resource, an
 * RC's for autoscaling's; a StatefulSet's passes its store's answer on.
 */
const MISSING_SCALE: Readonly<Record<string, GroupResource>> = {
  'apps/deployments': { group: 'apps', resource: 'deployments/scale' },
  'apps/replicasets': { group: 'apps', resource: 'replicasets/scale' },
  '/replicationcontrollers': { group: 'autoscaling', resource: 'replicationcontrollers/scale' },
}

async function readScaled(store: ResourceStore, namespace: string, name: string): Promise<KubeObject> {
  try {
    return await store.get(namespace, name)
  } catch (err) {
    const missing = MISSING_SCALE[`${store.entry.group}/${store.entry.resource}`]
    if (missing && err instanceof StatusError && err.code === 404) throw notFound(missing, name)
    throw err
  }
}

export async function getScale(store: ResourceStore, namespace: string, name: string): Promise<KubeObject> {
  const obj = await readScaled(store, namespace, name)
  const paths = store.entry.scalePaths
  if (!paths) return scaleOf(store.entry, obj)
  const values = readCustomScale(() => customScaleValues(obj, paths))
  if (values.specReplicas === undefined)
    throw internalError(`the spec replicas field ${JSON.stringify(paths.specReplicasPath)} does not exist`)
  return scaleObject(obj, { ...values, specReplicas: values.specReplicas })
}

/**
 * Stands for "no spec replicas yet" in the Scale a write starts from, as
 * upstream marks it (the smallest int32); a write that leaves it is refused.
 */
const UNSET_REPLICAS = -2147483648

/** The Scale a write through `/scale` starts from (what admission sees as the old object). */
function scaleBefore(entry: ResourceEntry, current: KubeObject): KubeObject {
  const paths = entry.scalePaths
  if (!paths) return scaleOf(entry, current)
  const values = readCustomScale(() => customScaleValues(current, paths))
  return scaleObject(current, { ...values, specReplicas: values.specReplicas ?? UNSET_REPLICAS })
}

/** Writes the replicas a Scale asks for into the object, where its kind (or its CRD) keeps them. */
function setReplicas(entry: ResourceEntry, obj: KubeObject, replicas: number): void {
  const paths = entry.scalePaths
  if (!paths) {
    const spec = isPlainObject(obj['spec']) ? obj['spec'] : {}
    obj['spec'] = { ...spec, replicas }
    return
  }
  if (replicas === UNSET_REPLICAS) throw badRequest(`the spec replicas field ${JSON.stringify(paths.specReplicasPath)} cannot be empty`)
  readCustomScale(() => setNested(obj as Record<string, unknown>, paths.specReplicasPath, replicas))
}

/**
 * Writes spec.replicas from `next(currentScale)` (a PUT's body, or the
 * current Scale patched). A resourceVersion in the Scale is a precondition
 * on the object, as upstream copies it over.
 *
 * Admission sees Scales, as upstream's scale storage admits them: the
 * mutating phase the requested Scale (its replicas are what is written),
 * the validating phase the Scales of the object about to be stored and of
 * the stored one, never the object itself.
 */
export async function updateScale(
  store: ResourceStore,
  namespace: string,
  name: string,
  next: (current: KubeObject) => unknown,
  ctx: RequestContext,
): Promise<KubeObject> {
  const { entry } = store
  const paths = entry.scalePaths
  const updated = await store.update(
    namespace,
    name,
    // `next` may answer a promise: a JSON patch, or a large merge, runs in steps.
    async (current) => {
      const before = scaleBefore(entry, current)
      const asked = decodedScale(store, await next(before))
      const admitted = await store.admitAsSubresource({ operation: 'UPDATE', object: asked, old: before, subresource: 'scale' }, ctx)
      const wanted = admittedReplicas(admitted, name, !paths)
      setReplicas(entry, current, wanted.replicas)
      if (wanted.resourceVersion) current.metadata.resourceVersion = wanted.resourceVersion
      return current
    },
    ctx,
    'scale',
    { admittedAs: { view: (obj) => scaleOf(entry, obj) } },
  )
  if (!paths) return scaleOf(entry, updated)
  // The write went through; a Scale that cannot be read from it is the client's to fix.
  try {
    const values = customScaleValues(updated, paths)
    return scaleObject(updated, { ...values, specReplicas: values.specReplicas ?? 0 })
  } catch (err) {
    if (err instanceof ScalePathError) throw badRequest(err.message)
    throw err
  }
}
