/**
 * `pods/<name>/eviction`: a delete that respects the pod's disruption budget,
 * as upstream's EvictionREST. The Eviction body carries DeleteOptions
 * (`dryRun` included, also from the query): a dry-run eviction checks
 * everything and keeps the pod and the budget as they are.
 */
import { badRequest, conflict, forbidden, hasStatusCode, internalError, StatusError } from '../machinery/status-error.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../machinery/object.js'
import { bodyDeleteOptions, isDryRun } from './delete-options.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import { type DeleteOptions, validateDeleteOptions } from './deletion.js'
import { labelSelectorFromObject, type LabelSelectorObject } from '../machinery/label-selector.js'
import type { Registry } from './registry.js'
import type { RequestContext } from './request-context.js'
import type { ResourceStore } from './store.js'

type Obj = Record<string, unknown>

const asObj = (v: unknown): Obj => (isPlainObject(v) ? v : {})

/** Checks the Eviction against the URL and returns its DeleteOptions, the query's dryRun added as upstream's propagateDryRun does. */
export function evictionDeleteOptions(body: unknown, namespace: string, name: string, queryDryRun: string[]): DeleteOptions {
  if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON or YAML object')
  const kind = typeof body['kind'] === 'string' ? body['kind'] : ''
  if (kind && kind !== 'Eviction') throw badRequest(`not a Eviction object: ${kind}`)
  const meta = asObj(body['metadata'])
  if (meta['name'] !== name) throw badRequest('name in URL does not match name in Eviction object')
  if (meta['namespace'] && meta['namespace'] !== namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  const options = body['deleteOptions'] === undefined || body['deleteOptions'] === null ? {} : bodyDeleteOptions(body['deleteOptions'])
  if (queryDryRun.length) {
    if (!options.dryRun?.length) options.dryRun = queryDryRun
    else if (options.dryRun.join(' ') !== queryDryRun.join(' '))
      throw badRequest(`Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${options.dryRun.join(' ')}]`)
  }
  validateDeleteOptions(options)
  return options
}

/** Pods whose disruption already happened, or is under way, go without asking their budget. */
function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = asObj(pod['status'])['phase']
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp)
}

function isReady(pod: KubeObject): boolean {
  const conditions = asObj(pod['status'])['conditions']
  return Array.isArray(conditions) && conditions.some((c) => asObj(c)['type'] === 'Ready' && asObj(c)['status'] === 'True')
}

/** Evicts the pod; answers upstream's Success Status (201), or the budget's refusal (429). */
export async function evictPod(
  registry: Registry,
  namespace: string,
  name: string,
  eviction: KubeObject,
  options: DeleteOptions,
  ctx: RequestContext,
): Promise<Obj> {
  const podsEntry = registry.catalogue.lookup('', 'v1', 'pods')
  if (!podsEntry) throw internalError('the pods resource is not served')
  const pods = registry.store(podsEntry)
  const dryRun = isDryRun(options)
  // The eviction is admitted as a whole (CREATE of pods/eviction); the pod's update and delete it makes are not, as upstream's.
  await registry.admit(podsEntry, { operation: 'CREATE', object: eviction, subresource: 'eviction', namespace, name }, { ...ctx, dryRun })
  const evictionCtx: RequestContext = { ...ctx, dryRun, admission: false }
  for (let attempt = 0; ; attempt++) {
    try {
      const pod = await pods.get(namespace, name)
      await checkBudget(registry, pod, dryRun, evictionCtx)
      // A pod still running is deleted only as it was read, unless the client named a resourceVersion itself.
      const enforce = !options.preconditions?.resourceVersion && !['Succeeded', 'Failed'].includes(String(asObj(pod['status'])['phase']))
      const pinned: DeleteOptions = enforce ? { ...options, preconditions: { ...options.preconditions, resourceVersion: pod.metadata.resourceVersion ?? '' } } : options
      await markAndDelete(pods, namespace, name, pinned, evictionCtx)
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }
    } catch (err) {
      // Someone changed the pod or its budget meanwhile: read both again, unless the client pinned a version.
      if (!hasStatusCode(err, 409) || options.preconditions?.resourceVersion || attempt >= 4) throw err
    }
  }
}

/**
 * Upstream's checkAndDecrement: the pod's one budget must allow a
 * disruption, which this eviction then uses up (not in a dry run). A pod
 * that is not ready goes without using one when the budget is healthy
 * anyway or its policy says AlwaysAllow.
 */
async function checkBudget(registry: Registry, pod: KubeObject, dryRun: boolean, ctx: RequestContext): Promise<void> {
  if (canIgnoreBudget(pod)) return
  const pdbEntry = registry.catalogue.lookup('policy', 'v1', 'poddisruptionbudgets')
  if (!pdbEntry) return
  const budgets = registry.store(pdbEntry)
  const namespace = pod.metadata.namespace ?? ''
  const matching = (await budgets.list(namespace, { allowWatchBookmarks: false })).items.filter((pdb) => {
    const selector = labelSelectorFromObject(asObj(pdb['spec'])['selector'] as LabelSelectorObject | undefined)
    return !selector.empty && selector.matches(pod.metadata.labels)
  })
  if (matching.length > 1) throw internalError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.')
  const pdb = matching[0]
  if (!pdb) return
  const spec = asObj(pdb['spec'])
  const status = asObj(pdb['status'])
  const num = (key: string): number => (typeof status[key] === 'number' ? status[key] : 0)
  if (!isReady(pod)) {
    if (spec['unhealthyPodEvictionPolicy'] === 'AlwaysAllow') return
    if (num('currentHealthy') >= num('desiredHealthy') && num('desiredHealthy') > 0) return
  }
  const pdbName = pdb.metadata.name ?? ''
  if (num('observedGeneration') < (pdb.metadata.generation ?? 0)) throw budgetRefusal(`The disruption budget ${pdbName} is still being processed by the server.`, 10)
  const gr = { group: 'policy', resource: 'poddisruptionbudget' }
  if (num('disruptionsAllowed') < 0) throw forbidden(gr, pdbName, 'pdb disruptions allowed is negative')
  if (Object.keys(asObj(status['disruptedPods'])).length > 2000)
    throw forbidden(gr, pdbName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller')
  if (num('disruptionsAllowed') === 0)
    throw budgetRefusal(`The disruption budget ${pdbName} needs ${num('desiredHealthy')} healthy pods and has ${num('currentHealthy')} currently`, 0)
  if (dryRun) return
  const resourceVersion = pdb.metadata.resourceVersion
  await budgets.update(
    namespace,
    pdbName,
    (current) => {
      const next = structuredClone(current)
      next.metadata.resourceVersion = resourceVersion ?? ''
      const st = asObj((next['status'] ??= {}))
      st['disruptionsAllowed'] = num('disruptionsAllowed') - 1
      if (st['disruptionsAllowed'] === 0) setDisruptionAllowedFalse(st, ctx.now)
      st['disruptedPods'] = { ...asObj(st['disruptedPods']), [pod.metadata.name ?? '']: formatTimestamp(ctx.now) }
      return next
    },
    // The budget's status is written as upstream's eviction writes it, through the loopback client: admitted, as the server.
    { ...ctx, user: LOOPBACK_IDENTITY, fieldManager: undefined, admission: undefined },
    'status',
  )
}

/** upstream's 429 for an eviction its budget does not allow, with the DisruptionBudget cause. */
function budgetRefusal(cause: string, retryAfterSeconds: number): StatusError {
  const details = { causes: [{ reason: 'DisruptionBudget', message: cause }], ...(retryAfterSeconds ? { retryAfterSeconds } : {}) }
  const headers: Record<string, string> = retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {}
  return new StatusError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", details, headers)
}

/** The budget's DisruptionAllowed condition once no disruption is left (upstream's UpdateDisruptionAllowedCondition). */
function setDisruptionAllowedFalse(status: Obj, now: Date): void {
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]).map(asObj) : []
  const existing = conditions.find((c) => c['type'] === 'DisruptionAllowed')
  const changed = existing?.['status'] !== 'False'
  const condition: Obj = {
    type: 'DisruptionAllowed',
    status: 'False',
    ...(status['observedGeneration'] !== undefined ? { observedGeneration: status['observedGeneration'] } : {}),
    lastTransitionTime: changed ? formatTimestamp(now) : existing['lastTransitionTime'],
    reason: 'InsufficientPods',
    message: '',
  }
  status['conditions'] = existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition]
}

/**
 * Upstream's addConditionAndDeletePod: the DisruptionTarget condition on the
 * pod's status, then the delete with the given options (not in a dry run:
 * there the delete alone runs, and stores nothing).
 */
async function markAndDelete(pods: ResourceStore, namespace: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<void> {
  let deleteOptions = options
  if (!ctx.dryRun) {
    const updated = await pods.update(
      namespace,
      name,
      (current) => {
        checkEvictionPreconditions(current, options)
        const next = structuredClone(current)
        setDisruptionTarget(asObj((next['status'] ??= {})), ctx.now)
        return next
      },
      { ...ctx, fieldManager: undefined },
      'status',
    )
    if (options.preconditions?.resourceVersion)
      deleteOptions = { ...options, preconditions: { ...options.preconditions, resourceVersion: updated.metadata.resourceVersion ?? '' } }
  }
  await pods.delete(namespace, name, deleteOptions, ctx)
}

function checkEvictionPreconditions(current: KubeObject, options: DeleteOptions): void {
  const name = current.metadata.name ?? ''
  const gr = { group: '', resource: 'Pod' }
  const { uid, resourceVersion } = options.preconditions ?? {}
  if (uid && uid !== current.metadata.uid)
    throw conflict(gr, name, `the UID in the precondition (${uid}) does not match the UID in record (${current.metadata.uid ?? ''}). The object might have been deleted and then recreated`)
  if (resourceVersion && resourceVersion !== current.metadata.resourceVersion)
    throw conflict(
      gr,
      name,
      `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${current.metadata.resourceVersion ?? ''}). The object might have been modified`,
    )
}

/** upstream's UpdatePodCondition with DisruptionTarget: a new transition time only when the status changes. */
function setDisruptionTarget(status: Obj, now: Date): void {
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]).map(asObj) : []
  const existing = conditions.find((c) => c['type'] === 'DisruptionTarget')
  const condition: Obj = {
    type: 'DisruptionTarget',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: existing?.['status'] === 'True' ? existing['lastTransitionTime'] : formatTimestamp(now),
    reason: 'EvictionByEvictionAPI',
    message: 'Eviction API: evicting',
  }
  status['conditions'] = existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition]
}
