/**
 * kube-controller-manager's resource-quota controller, in-process: each
 * quota's `status.hard` follows its spec and `status.used` is counted from
 * what the namespace holds, when the quota is created or changed, when an
 * object it counts goes (or a pod ends), and on a periodic resync. Admission
 * charges creates as they happen (core/admission/quota); this controller
 * gives back what deletes free. Each write is conditional on the quota's
 * resourceVersion, so a charge made meanwhile by admission is never lost:
 * the controller counts again instead.
 */
import { BUILTIN_EVALUATORS, evaluatorFor, type QuotaEvaluator, usageOf } from '../quota/evaluators.js'
import { specOf } from '../quota/pod-resources.js'
import { add, equalLists, mask, parseResourceList, type ResourceList, usedOf, withUsed } from '../quota/resource-list.js'
import { scopeSelectorsOf } from '../quota/scopes.js'
import type { SharedInformer } from '../client/informer.js'
import type { Logger } from '../logging/logger.js'
import type { ResourceObjects, StoredResources } from './stored-resources.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { Watcher } from '../storage/interface.js'
import { TimeSlice } from '../machinery/time-slice.js'

/** Upstream's --resource-quota-sync-period default. */
export const DEFAULT_QUOTA_RESYNC_MS = 5 * 60_000
const CONFLICT_RETRY_MS = 50

export interface ResourceQuotaControllerOptions {
  resyncMs?: number
}

/** The group and resource a quota name counts (`count/deployments.apps`), or the built-in evaluators' ones. */
function resourcesNamedBy(name: string): { group: string; resource: string }[] {
  const builtin = BUILTIN_EVALUATORS.filter((e) => e.matchingResources([name]).length > 0)
  if (builtin.length) return builtin.map(({ group, resource }) => ({ group, resource }))
  if (!name.startsWith('count/')) return []
  const qualified = name.slice('count/'.length)
  const dot = qualified.indexOf('.')
  return [dot < 0 ? { group: '', resource: qualified } : { group: qualified.slice(dot + 1), resource: qualified.slice(0, dot) }]
}

const sameHard = (spec: unknown, status: unknown): boolean =>
  equalLists(parseResourceList(spec), parseResourceList(status)) &&
  Object.keys(isPlainObject(spec) ? spec : {}).length === Object.keys(isPlainObject(status) ? status : {}).length

/** A pod that ended or is going uses less than before: worth counting again. */
function mayFreeUsage(object: KubeObject): boolean {
  const status = isPlainObject(object['status']) ? object['status'] : {}
  return Boolean(object.metadata.deletionTimestamp) || status['phase'] === 'Succeeded' || status['phase'] === 'Failed'
}

export function startResourceQuotaController(
  stores: StoredResources,
  quotas: SharedInformer,
  now: () => Date,
  logger: Logger,
  options: ResourceQuotaControllerOptions = {},
): () => void {
  const dirty = new Set<string>()
  const watchers = new Map<string, Watcher | undefined>()
  let running = false
  let stopped = false

  const storeOf = (group: string, resource: string): ResourceObjects | undefined =>
    stores.storedResources().find((s) => s.entry.group === group && s.entry.resource === resource && s.entry.namespaced)

  const enqueue = (namespace: string): void => {
    if (stopped) return
    dirty.add(namespace)
    if (!running) void drain()
  }

  /** Follows the deletes (and pod endings) of a resource some quota counts, to give the usage back. */
  const follow = (group: string, resource: string): void => {
    const key = `${group}/${resource}`
    if (watchers.has(key) || stopped) return
    const store = storeOf(group, resource)
    watchers.set(key, undefined)
    if (!store) return
    void (async () => {
      try {
        const revision = await store.storage.currentRevision()
        if (stopped) return
        const watcher = store.storage.watch(store.prefix(''), { resourceVersion: String(revision) })
        watchers.set(key, watcher)
        for await (const event of watcher) {
          const ns = event.object.metadata.namespace ?? ''
          if (!ns || quotas.list(ns).length === 0) continue
          const podEnded = resource === 'pods' && group === '' && mayFreeUsage(event.object)
          const changes = event.type === 'MODIFIED' && (podEnded || (group === '' && (resource === 'services' || resource === 'persistentvolumeclaims')))
          if (event.type === 'DELETED' || changes) enqueue(ns)
        }
      } catch (err) {
        if (!stopped) logger.warn({ resource: key, err: String(err) }, 'resource quota watch ended')
      }
      // Followed again from now on; the next resync covers what happened in between.
      watchers.delete(key)
    })()
  }

  const followWhatQuotaCounts = (quota: KubeObject): void => {
    const spec = specOf(quota)
    for (const name of Object.keys(isPlainObject(spec['hard']) ? spec['hard'] : {}))
      for (const { group, resource } of resourcesNamedBy(name)) follow(group, resource)
  }

  /**
   * What the namespace uses of the quota's hard names, counted from storage (upstream's CalculateUsage).
   * `listed` keeps each resource's objects for the namespace's pass: a hundred quotas over the same
   * objects read them once.
   */
  const calculateUsage = async (namespace: string, quota: KubeObject, listed: Map<string, Promise<KubeObject[]>>): Promise<ResourceList> => {
    const hardNames = Object.keys(parseResourceList(specOf(quota)['hard']))
    const scopes = scopeSelectorsOf(quota)
    const evaluators = new Map<string, QuotaEvaluator>()
    for (const name of hardNames)
      for (const { group, resource } of resourcesNamedBy(name)) evaluators.set(`${group}/${resource}`, evaluatorFor(group, resource))
    let used: ResourceList = {}
    for (const evaluator of evaluators.values()) {
      const names = evaluator.matchingResources(hardNames)
      const store = storeOf(evaluator.group, evaluator.resource)
      if (!names.length || !store) continue
      const key = `${evaluator.group}/${evaluator.resource}`
      let items = listed.get(key)
      if (!items) listed.set(key, (items = store.storage.list(store.prefix(namespace)).then((l) => l.items)))
      used = add(used, usageOf(evaluator, await items, names, scopes, now()))
    }
    return used
  }

  const syncQuota = async (namespace: string, quota: KubeObject, listed: Map<string, Promise<KubeObject[]>>): Promise<void> => {
    const hard = specOf(quota)['hard']
    const hardNames = Object.keys(parseResourceList(hard))
    const counted = await calculateUsage(namespace, quota, listed)
    const used = mask({ ...usedOf(quota), ...counted }, hardNames)
    const status = isPlainObject(quota['status']) ? quota['status'] : {}
    // Names no evaluator counts stay out of used, as upstream's: comparing used alone keeps the controller from writing forever.
    if (sameHard(hard, status['hard']) && status['used'] !== undefined && equalLists(used, usedOf(quota))) return
    const store = storeOf('', 'resourcequotas')
    if (!store) return
    const name = quota.metadata.name ?? ''
    const rv = quota.metadata.resourceVersion ?? ''
    await store.storage.guaranteedUpdate(
      store.key(namespace, name),
      (current) => withUsed({ ...current, status: { ...(isPlainObject(current['status']) ? current['status'] : {}), hard: isPlainObject(hard) ? { ...hard } : {} } }, used),
      { preconditions: { resourceVersion: rv } },
    )
  }

  const syncNamespace = async (namespace: string): Promise<void> => {
    const listed = new Map<string, Promise<KubeObject[]>>()
    // Counting is work without I/O once the objects are read: other requests run between quotas.
    const slice = new TimeSlice()
    for (const quota of quotas.list(namespace)) {
      await slice.pause()
      if (stopped) return
      try {
        await syncQuota(namespace, quota, listed)
      } catch (err) {
        if (stopped) return
        // Changed meanwhile (an admission charge, a spec edit): counted again once the index has the new version.
        logger.debug({ module: 'resource-quota', namespace, quota: quota.metadata.name, err: String(err) }, 'resource quota sync retried')
        setTimeout(() => enqueue(namespace), CONFLICT_RETRY_MS)
      }
    }
  }

  const drain = async (): Promise<void> => {
    running = true
    try {
      while (dirty.size && !stopped) {
        const [namespace] = dirty
        dirty.delete(namespace as string)
        await syncNamespace(namespace as string)
      }
    } finally {
      running = false
    }
  }

  const unsubscribe = quotas.onChange(({ type, object }) => {
    if (type === 'delete') return
    followWhatQuotaCounts(object)
    const status = isPlainObject(object['status']) ? object['status'] : {}
    // A new quota, or one whose spec changed: counted at once; otherwise deletes and the resync keep it current.
    if (!sameHard(specOf(object)['hard'], status['hard']) || status['used'] === undefined) enqueue(object.metadata.namespace ?? '')
  })
  void quotas.ready.then(() => {
    for (const ns of quotas.namespaces()) {
      for (const quota of quotas.list(ns)) followWhatQuotaCounts(quota)
      enqueue(ns)
    }
  })
  const resync = setInterval(() => quotas.namespaces().forEach(enqueue), options.resyncMs ?? DEFAULT_QUOTA_RESYNC_MS)
  ;(resync as { unref?: () => void }).unref?.()

  return () => {
    stopped = true
    clearInterval(resync)
    unsubscribe()
    for (const watcher of watchers.values()) watcher?.stop()
  }
}
