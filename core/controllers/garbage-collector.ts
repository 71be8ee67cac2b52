/**
 * What kube-controller-manager's garbage collector does, run in-process:
 * objects whose owners are gone are deleted, an owner deleted with the Orphan
 * policy frees its dependents before it goes, and an owner deleted in the
 * foreground waits until its blocking dependents are gone.
 *
 * Every stored resource is listed and then watched into an owner graph
 * (garbage-collector-graph.ts); the graph names the objects to look at, and
 * the workers read their live state and that of their owners before acting
 * through the registry's stores, as any client would.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { GARBAGE_COLLECTOR_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../machinery/finalizers.js'
import type { StoredResources } from './stored-resources.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import type { KubeObject } from '../machinery/object.js'
import type { StorageEvent, Watcher } from '../storage/interface.js'
import { type GraphEffects, isDeletingDependents, type ObjectRef, OwnerGraph, ownerReferencesOf } from './garbage-collector-graph.js'
import { resolveOwnerKind, type WatchedResource, watchedResources } from './garbage-collector-kinds.js'
import { WorkQueue, type WorkResult } from './garbage-collector-queue.js'

export interface GarbageCollectorOptions {
  /** Objects checked in parallel (upstream's --concurrent-gc-syncs). @default 5 */
  workers?: number
  /** First delay before a watch is opened again after it failed, in ms. @default 100 */
  rewatchDelayMs?: number
}

/** The object went, or was replaced by another of the same name, while the collector worked on it. */
class ObjectReplaced extends Error {}

type Classified = { solid: string[]; dangling: string[]; waiting: string[] }

/** Starts the collector; returns the function that stops it. */
export function startGarbageCollector(
  stores: StoredResources,
  now: () => Date,
  logger: Logger,
  options: GarbageCollectorOptions = {},
): () => void {
  const controller = new AbortController()
  const signal = controller.signal
  const graph = new OwnerGraph()
  const warned = new Set<string>()
  const context = (): DirectWriteContext => ({ user: GARBAGE_COLLECTOR_IDENTITY, now: now(), dryRun: false })

  const warnOnce = (key: string, fields: Record<string, unknown>, message: string): void => {
    if (warned.has(key)) return
    warned.add(key)
    logger.warn(fields, message)
  }
  const onError = (key: string, err: unknown): void => {
    logger.warn({ item: key, err: String(err) }, 'garbage collection of an object failed; it will be retried')
  }

  const workers = Math.max(1, options.workers ?? 5)
  const deletions = new WorkQueue<ObjectRef>((ref) => attemptToDelete(ref), { workers, onError })
  const orphanings = new WorkQueue<ObjectRef>((ref) => attemptToOrphan(ref), { workers: 2, onError })

  const apply = (effects: GraphEffects): void => {
    for (const ref of effects.attemptToDelete) deletions.add(ref.uid, ref)
    for (const ref of effects.attemptToOrphan) orphanings.add(ref.uid, ref)
  }

  /** The live object, or undefined when it is gone (or another object now has its name). */
  const read = async (ref: ObjectRef): Promise<KubeObject | undefined> => {
    try {
      const obj = await stores.store(ref.entry).get(ref.namespace, ref.name)
      return obj.metadata.uid === ref.uid ? obj : undefined
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined
      throw err
    }
  }

  /** Changes the object's metadata if it is still the same object; false when it is gone. */
  const updateMetadata = async (ref: ObjectRef, change: (obj: KubeObject) => void): Promise<boolean> => {
    const store = stores.store(ref.entry)
    try {
      await store.update(
        ref.namespace,
        ref.name,
        (current) => {
          if (current.metadata.uid !== ref.uid) throw new ObjectReplaced()
          change(current)
          return current
        },
        context(),
      )
      return true
    } catch (err) {
      if (err instanceof ObjectReplaced || hasStatusCode(err, 404)) return false
      throw err
    }
  }

  const removeFinalizer = (ref: ObjectRef, finalizer: string): Promise<boolean> =>
    updateMetadata(ref, (obj) => {
      const rest = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer)
      if (rest.length) obj.metadata.finalizers = rest
      else delete obj.metadata.finalizers
    })

  const removeOwnerReferences = (ref: ObjectRef, ownerUids: readonly string[]): Promise<boolean> =>
    updateMetadata(ref, (obj) => {
      const rest = (obj.metadata.ownerReferences ?? []).filter((o) => !ownerUids.includes(o.uid))
      if (rest.length) obj.metadata.ownerReferences = rest
      else delete obj.metadata.ownerReferences
    })

  /** Makes every reference of the object non-blocking, so that owners waiting on it in a cycle can go. */
  const unblockOwnerReferences = (ref: ObjectRef): Promise<boolean> =>
    updateMetadata(ref, (obj) => {
      for (const owner of obj.metadata.ownerReferences ?? []) if (owner.blockOwnerDeletion === true) owner.blockOwnerDeletion = false
    })

  /**
   * Looks up every owner: solid (it lives), dangling (gone, or another object
   * of that name), waiting (deleted in the foreground). Undefined when a
   * reference cannot be resolved: the object is then left alone.
   */
  const classify = async (item: ObjectRef, obj: KubeObject): Promise<Classified | undefined> => {
    const out: Classified = { solid: [], dangling: [], waiting: [] }
    for (const ref of ownerReferencesOf(obj)) {
      const entry = resolveOwnerKind(stores.catalogue, ref.apiVersion, ref.kind)
      if (!entry) {
        warnOnce(
          `kind ${ref.apiVersion} ${ref.kind}`,
          { apiVersion: ref.apiVersion, kind: ref.kind },
          'an owner reference names a kind this server does not serve; objects owned by it are not garbage collected',
        )
        return undefined
      }
      if (entry.namespaced && !item.entry.namespaced) {
        warnOnce(
          `cluster-scoped ${item.uid}`,
          { object: item.name, resource: item.entry.resource, owner: `${ref.kind}/${ref.name}` },
          'a cluster-scoped object names a namespaced owner; it is not garbage collected',
        )
        return undefined
      }
      const owner = await read({ entry, namespace: entry.namespaced ? item.namespace : '', name: ref.name, uid: ref.uid })
      if (!owner) out.dangling.push(ref.uid)
      else if (owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FOREGROUND_FINALIZER)) out.waiting.push(ref.uid)
      else out.solid.push(ref.uid)
    }
    return out
  }

  const deleteObject = async (ref: ObjectRef, latest: KubeObject, propagationPolicy: string): Promise<WorkResult> => {
    const preconditions = { uid: ref.uid, resourceVersion: latest.metadata.resourceVersion ?? '' }
    try {
      await stores.store(ref.entry).delete(ref.namespace, ref.name, { propagationPolicy, preconditions }, context())
      return 'done'
    } catch (err) {
      if (hasStatusCode(err, 404)) return 'done'
      // Written meanwhile (its owners may have changed): look at it again.
      if (hasStatusCode(err, 409)) return 'retry'
      throw err
    }
  }

  /** An owner deleted in the foreground: it goes when no dependent blocks it any more. */
  const processDeletingDependents = async (ref: ObjectRef): Promise<WorkResult> => {
    const blocking = graph.blockingDependents(ref.uid)
    if (blocking.length === 0) {
      await removeFinalizer(ref, FOREGROUND_FINALIZER)
      return 'done'
    }
    // Those on their way out already are left alone: the owner comes back here as each goes, and asking every
    // one of them again each time read all N of them N times (a foreground deletion of 2,000 held the thread 21 s).
    for (const dependent of blocking) if (!graph.isBeingDeleted(dependent.uid)) deletions.add(dependent.uid, dependent)
    return 'done'
  }

  /** Upstream's attemptToDeleteItem. */
  const attemptToDelete = async (ref: ObjectRef): Promise<WorkResult> => {
    if (signal.aborted) return 'done'
    const latest = await read(ref)
    if (!latest) return 'done'
    if (latest.metadata.deletionTimestamp) {
      // On its way out already: only a foreground deletion needs the collector.
      const meta = { beingDeleted: true, finalizers: latest.metadata.finalizers ?? [] }
      return isDeletingDependents(meta) ? processDeletingDependents(ref) : 'done'
    }
    if (ownerReferencesOf(latest).length === 0) return 'done'
    const owners = await classify(ref, latest)
    if (!owners) return 'done'
    if (owners.solid.length > 0) {
      // A live owner keeps the object; references to owners that are gone or waiting on it are dropped.
      const drop = [...owners.dangling, ...owners.waiting]
      if (drop.length > 0) await removeOwnerReferences(ref, drop)
      return 'done'
    }
    const dependents = graph.dependents(ref.uid)
    if (owners.waiting.length > 0 && dependents.length > 0) {
      // Its owner waits for it, and it has dependents of its own: it goes in the foreground too.
      // A dependent that waits as well may form a cycle: unblock this object's references first.
      if (dependents.some((d) => graph.isDeletingDependents(d.uid))) await unblockOwnerReferences(ref)
      return deleteObject(ref, latest, 'Foreground')
    }
    const finalizers = latest.metadata.finalizers ?? []
    const policy = finalizers.includes(ORPHAN_FINALIZER)
      ? 'Orphan'
      : finalizers.includes(FOREGROUND_FINALIZER)
        ? 'Foreground'
        : 'Background'
    return deleteObject(ref, latest, policy)
  }

  /** Upstream's attemptToOrphanWorker: free the dependents, then let the owner go. */
  const attemptToOrphan = async (ref: ObjectRef): Promise<WorkResult> => {
    if (signal.aborted) return 'done'
    const latest = await read(ref)
    if (!latest?.metadata.deletionTimestamp || !latest.metadata.finalizers?.includes(ORPHAN_FINALIZER)) return 'done'
    const results = await Promise.allSettled(graph.dependents(ref.uid).map((d) => removeOwnerReferences(d, [ref.uid])))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
    await removeFinalizer(ref, ORPHAN_FINALIZER)
    return 'done'
  }

  const refOf = (resource: WatchedResource, obj: KubeObject): ObjectRef | undefined => {
    const { uid, name, namespace } = obj.metadata
    if (!uid || !name) return undefined
    return { entry: resource.entry, namespace: namespace ?? '', name, uid }
  }

  const onEvent = (resource: WatchedResource, event: StorageEvent): void => {
    if (event.type === 'BOOKMARK') return
    const ref = refOf(resource, event.object)
    if (!ref) return
    apply(event.type === 'DELETED' ? graph.forget(ref.uid) : graph.observe(ref, event.object))
  }

  // One signal listener per watch or pause would be ~100 on one signal (runtimes warn of a leak): they are kept here instead.
  const watchers = new Set<Watcher>()
  const pauses = new Set<() => void>()
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        pauses.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      ;(timer as { unref?: () => void }).unref?.()
      pauses.add(wake)
    })

  /**
   * Lists the resource into the graph, then follows its watch; lists again
   * when the watch ends or fails (what was deleted meanwhile is forgotten).
   * `firstPass` is called once, after the first list (or its failure).
   */
  const follow = async (resource: WatchedResource, firstPass: () => void): Promise<void> => {
    const initialDelay = options.rewatchDelayMs ?? 100
    let delay = initialDelay
    let first = true
    while (!signal.aborted) {
      try {
        // Read as the watch's objects are: kept in the graph, never changed. The first list takes what the
        // watch cache holds (resourceVersion 0, as upstream's informers first list) and the watch from its
        // revision brings the rest: a consistent read of every resource at start made each cache wait for
        // progress from etcd, some sixty round trips of questions while the server was starting.
        const list = await stores.store(resource.entry).storage.list(resource.prefix, { readOnly: true, ...(first ? { resourceVersion: '0' } : {}) })
        if (signal.aborted) return
        const present = new Set<string>()
        for (const obj of list.items) {
          const ref = refOf(resource, obj)
          if (!ref) continue
          present.add(ref.uid)
          apply(graph.observe(ref, obj))
        }
        for (const uid of graph.uidsOf(resource.entry)) if (!present.has(uid)) apply(graph.forget(uid))
        if (first) firstPass()
        first = false
        const watcher = stores.store(resource.entry).storage.watch(resource.prefix, { resourceVersion: String(list.revision), readOnly: true })
        watchers.add(watcher)
        try {
          for await (const event of watcher) {
            onEvent(resource, event)
            delay = initialDelay
          }
        } finally {
          watchers.delete(watcher)
        }
      } catch (err) {
        if (signal.aborted) return
        logger.warn({ prefix: resource.prefix, err: String(err) }, 'garbage collector watch failed; listing again')
      }
      if (first) firstPass()
      first = false
      if (signal.aborted) return
      await sleep(delay)
      delay = Math.min(delay * 2, 30_000)
    }
  }

  // Nothing is collected before every resource was listed once: a dependent seen before its owner is not an orphan.
  const resources = watchedResources(stores)
  let pending = resources.length
  const startWorkers = (): void => {
    deletions.start()
    orphanings.start()
  }
  const firstPass = (): void => {
    pending -= 1
    if (pending === 0) startWorkers()
  }
  if (pending === 0) startWorkers()
  const followed = new Map<string, WatchedResource>()
  const start = (resource: WatchedResource, onFirstPass: () => void): void => {
    followed.set(resource.prefix, resource)
    follow(resource, onFirstPass).catch((err) => {
      if (!signal.aborted) logger.error({ prefix: resource.prefix, err: String(err) }, 'garbage collector stopped following a resource')
    })
  }
  for (const resource of resources) start(resource, firstPass)
  // Custom resources come and go with their definitions: a new one is followed from then on; one
  // defined again under the same prefix is read through its new entry.
  const stopFollowingCatalogue = stores.catalogue.onChange(() => {
    for (const resource of watchedResources(stores)) {
      const known = followed.get(resource.prefix)
      if (known) known.entry = resource.entry
      else start(resource, () => {})
    }
  })

  return () => {
    controller.abort()
    stopFollowingCatalogue()
    deletions.stop()
    orphanings.stop()
    for (const watcher of [...watchers]) watcher.stop()
    for (const wake of [...pauses]) wake()
  }
}
