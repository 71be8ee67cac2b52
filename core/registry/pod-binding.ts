/**
 * Binding a pod to a node, as a scheduler does (upstream's BindingREST in
 * pkg/registry/core/pod/storage): `POST pods/<name>/binding`, or the legacy
 * `POST namespaces/<ns>/bindings`, with a Binding. The Binding is admitted
 * as a CREATE of pods/binding; the pod's own write that follows goes
 * straight to storage (no pod admission, no pod validation: spec.nodeName
 * is otherwise immutable), setting spec.nodeName, the Binding's
 * annotations and the PodScheduled condition. A pod already bound, being
 * deleted, or of another UID or resourceVersion than the Binding names is
 * a 409, and nothing changes.
 */
import { aggregateText, fieldPath, type FieldError, notSupported, required } from '../machinery/field.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../machinery/object.js'
import { badRequest, conflict, internalError, type Status, StatusError, type StatusReason } from '../machinery/status-error.js'
import type { Registry } from './registry.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import type { RequestContext } from './request-context.js'
import { interpretStorageError } from './storage-errors.js'

const BINDING_RESOURCE = { group: '', resource: 'pods/binding' }

/** Upstream's ValidatePodBinding: a target of kind Node (or none) with a name. */
function validateBinding(binding: KubeObject): FieldError[] {
  const target = isPlainObject(binding['target']) ? binding['target'] : {}
  const errs: FieldError[] = []
  const kind = typeof target['kind'] === 'string' ? target['kind'] : ''
  if (kind !== '' && kind !== 'Node') errs.push(notSupported(fieldPath('target').child('kind'), kind, ['Node', '<empty>']))
  if (typeof target['name'] !== 'string' || target['name'] === '') errs.push(required(fieldPath('target').child('name')))
  return errs
}

export interface BindRequest {
  namespace: string
  /** The pod named in the URL (pods/<name>/binding); absent for the legacy bindings collection. */
  urlName?: string
  body: unknown
  /** What admission sees: pods (as pods/binding) or the legacy bindings collection. */
  admittedAs: ResourceEntry
}

/** Binds the pod; answers upstream's Success Status (201). */
export async function bindPod(registry: Registry, req: BindRequest, ctx: RequestContext): Promise<Record<string, unknown>> {
  if (!isPlainObject(req.body) || !isPlainObject(req.body['metadata'])) throw badRequest('the body of the request was not a Binding')
  const binding = req.body as KubeObject
  const bodyNamespace = binding.metadata.namespace
  if (bodyNamespace && bodyNamespace !== req.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  const name = binding.metadata.name ?? ''
  if (req.urlName !== undefined && req.urlName !== name) throw badRequest('name in URL does not match name in Binding object')
  if (!name) throw badRequest('name or generateName is required')
  const podsEntry = registry.catalogue.lookup('', 'v1', 'pods')
  if (!podsEntry) throw internalError('the pods resource is not served')
  binding.metadata.namespace = req.namespace
  const legacy = req.urlName === undefined
  const admitted = await registry.admit(
    req.admittedAs,
    { operation: 'CREATE', object: binding, ...(legacy ? {} : { subresource: 'binding' }), namespace: req.namespace, name },
    ctx,
  )
  const errs = validateBinding(admitted)
  // Upstream hands back the field errors as a plain aggregate, which its handler answers as an unclassified 500.
  if (errs.length) throw new StatusError(500, '' as StatusReason, aggregateText(errs))
  const target = admitted['target'] as { name: string }
  const pods = registry.store(podsEntry)
  const uid = admitted.metadata.uid
  const resourceVersion = admitted.metadata.resourceVersion
  const assign = (current: KubeObject): KubeObject => {
    if (uid && current.metadata.uid !== uid)
      throw conflict({ group: '', resource: 'pods' }, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`)
    if (resourceVersion && current.metadata.resourceVersion !== resourceVersion)
      throw conflict(
        { group: '', resource: 'pods' },
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      )
    if (current.metadata.deletionTimestamp) throw conflict(BINDING_RESOURCE, name, `pod ${name} is being deleted, cannot be assigned to a host`)
    const spec = isPlainObject(current['spec']) ? current['spec'] : (current['spec'] = {})
    const bound = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : ''
    if (bound) throw conflict(BINDING_RESOURCE, name, `pod ${name} is already assigned to node ${JSON.stringify(bound)}`)
    // The scheduler only binds pods whose gates are gone; a binding that skips it is refused as upstream does.
    if (Array.isArray(spec['schedulingGates']) && spec['schedulingGates'].length) throw conflict(BINDING_RESOURCE, name, `pod ${name} has non-empty .spec.schedulingGates`)
    spec['nodeName'] = target.name
    const annotations = admitted.metadata.annotations
    if (annotations && Object.keys(annotations).length) current.metadata.annotations = { ...current.metadata.annotations, ...annotations }
    markScheduled(current, ctx.now)
    return current
  }
  if (ctx.dryRun) assign(await pods.get(req.namespace, name))
  else {
    try {
      await pods.storage.guaranteedUpdate(pods.key(req.namespace, name), async (current) => assign(structuredClone(current)))
    } catch (err) {
      throw interpretStorageError(err, { group: '', resource: 'pods' }, name)
    }
  }
  const success: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }
  return { ...success }
}

/** PodScheduled True: an existing condition changes its status (and its transition time when it changed), else one is added. */
function markScheduled(pod: KubeObject, now: Date): void {
  const status = isPlainObject(pod['status']) ? pod['status'] : (pod['status'] = {})
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as Record<string, unknown>[]) : (status['conditions'] = [])
  const existing = conditions.find((c) => isPlainObject(c) && c['type'] === 'PodScheduled')
  if (!existing) {
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: formatTimestamp(now) })
    return
  }
  if (existing['status'] !== 'True') existing['lastTransitionTime'] = formatTimestamp(now)
  existing['status'] = 'True'
  delete existing['reason']
  delete existing['message']
}
