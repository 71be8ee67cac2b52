/**
 * What apiextensions-apiserver's controllers do for CustomResourceDefinitions,
 * in one loop per definition: accept its names (NamesAccepted), establish it
 * (Established) and serve its versions through the catalogue, and, once it
 * is marked for deletion, delete every custom resource it defined before
 * letting it go (the `customresourcecleanup` finalizer).
 *
 * Definitions stored before start-up are served before the server says it is
 * ready; later changes arrive through a watch and are served at once.
 */
import { type CustomResourceDeps, customResourceEntries } from '../crd/entry.js'
import { hasStatusCode } from '../machinery/status-error.js'
import { LOOPBACK_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { DirectWriteContext } from '../client/object-stores.js'
import type { ResourceObjects, StoredResources } from './stored-resources.js'
import { customResourceDefinitions } from '../resources/groups/apiextensions.js'
import {
  conditionOf,
  CUSTOM_RESOURCE_CLEANUP_FINALIZER,
  type CustomResourceDefinition,
  setCondition,
} from '../resources/apiextensions/types.js'
import { groupVersion, type ResourceEntry } from '../resources/catalogue.js'
import { formatTimestamp } from '../machinery/object.js'
import { sameJson } from '../machinery/same-json.js'
import { decideNames } from './crd-names.js'

/** The manager the controllers' status writes are recorded under, as upstream's. */
const MANAGER = 'kube-apiserver'

/** How long to wait before looking again at a definition whose reconcile failed or whose instances are held by finalizers. */
const RETRY_MS = 1000

export interface CrdController {
  /** Resolves once the definitions stored at start-up are served. */
  ready: Promise<void>
  /** Serves what is stored now, at once: the store was restored under it (an embedder's reset). */
  resync(): Promise<void>
  stop(): void
}

interface Served {
  /** What the entries were built from: rebuilt only when it changes. */
  basis: string
  entries: ResourceEntry[]
}

export function startCrdController(stores: StoredResources, now: () => Date, logger: Logger, deps: CustomResourceDeps): CrdController {
  const crds = stores.store(customResourceDefinitions)
  const controller = new AbortController()
  const signal = controller.signal
  const served = new Map<string, Served>()
  /** Each definition's resourceVersion as the last finished reconcile served it (none while one runs, or it terminates). */
  const reconciledAt = new Map<string, string>()
  const retries = new Set<ReturnType<typeof setTimeout>>()
  const context = (): DirectWriteContext => ({ user: LOOPBACK_IDENTITY, now: now(), dryRun: false, fieldManager: MANAGER })

  /**
   * One reconcile at a time per definition; a change meanwhile runs it once
   * more afterwards, unless the reconcile asked to be retried later (its own
   * status writes would otherwise run it again at once, without end, while
   * instances held by finalizers remain).
   */
  const running = new Map<string, { again: boolean; retrying: boolean; done: Promise<void> }>()
  const enqueue = (name: string): Promise<void> => {
    const current = running.get(name)
    if (current) {
      current.again = true
      return current.done
    }
    const state = { again: false, retrying: false, done: Promise.resolve() }
    state.done = (async () => {
      do {
        state.again = false
        state.retrying = false
        try {
          await reconcile(name)
        } catch (err) {
          if (!signal.aborted) logger.warn({ crd: name, err: String(err) }, 'reconciling a CustomResourceDefinition failed; it will be retried')
          retryLater(name)
        }
      } while (state.again && !state.retrying && !signal.aborted)
      running.delete(name)
    })()
    running.set(name, state)
    return state.done
  }

  const retryLater = (name: string): void => {
    if (signal.aborted) return
    const state = running.get(name)
    if (state) state.retrying = true
    const timer = setTimeout(() => {
      retries.delete(timer)
      // The retry is due: a reconcile still running must run once more.
      const busy = running.get(name)
      if (busy) busy.retrying = false
      void enqueue(name)
    }, RETRY_MS)
    retries.add(timer)
  }

  const read = async (name: string): Promise<CustomResourceDefinition | undefined> => {
    try {
      return (await crds.get('', name)) as CustomResourceDefinition
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined
      throw err
    }
  }

  const serve = (name: string, crd: CustomResourceDefinition | undefined): void => {
    const before = served.get(name)
    const basis = crd ? JSON.stringify([crd.spec, crd.status?.acceptedNames, crd.metadata.deletionTimestamp ?? null]) : ''
    if (before?.basis === basis) return
    const entries = crd ? customResourceEntries(crd, deps) : []
    stores.catalogue.replace(before?.entries ?? [], entries)
    if (entries.length) served.set(name, { basis, entries })
    else served.delete(name)
  }

  /** Writes the status `change` makes, if it makes any. */
  const updateStatus = async (crd: CustomResourceDefinition, change: (crd: CustomResourceDefinition) => void): Promise<CustomResourceDefinition> => {
    const next = structuredClone(crd)
    change(next)
    if (sameJson(next.status, crd.status)) return crd
    return (await crds.update('', crd.metadata.name ?? '', () => next, context(), 'status')) as CustomResourceDefinition
  }

  /** Definitions whose names were refused may get them once another definition changed or went. */
  const wakeRivals = (all: readonly CustomResourceDefinition[], changed: string, group?: string): void => {
    for (const other of all)
      if ((group === undefined || other.spec.group === group) && other.metadata.name !== changed && conditionOf(other, 'NamesAccepted')?.status !== 'True')
        void enqueue(other.metadata.name ?? '')
  }

  /** Every definition, only read (names, conditions): the watch cache's own frozen objects, uncopied, since each reconcile lists them all. */
  const listAll = async (): Promise<readonly CustomResourceDefinition[]> =>
    (await crds.list('', { allowWatchBookmarks: false }, true)).items as CustomResourceDefinition[]

  const reconcile = async (name: string): Promise<void> => {
    reconciledAt.delete(name)
    const stored = await read(name)
    if (!stored) {
      serve(name, undefined)
      // Its names are free now.
      return wakeRivals(await listAll(), name)
    }
    if (stored.metadata.deletionTimestamp) return finalize(stored)
    const all = await listAll()
    const naming = decideNames(stored, all)
    const crd = await updateStatus(stored, (next) => {
      const stamp = formatTimestamp(now())
      next.status ??= {}
      next.status.acceptedNames = naming.acceptedNames
      setCondition(next, naming.namesAccepted, stamp)
      if (naming.namesAccepted.status === 'True' && conditionOf(next, 'Established')?.status !== 'True')
        setCondition(next, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, stamp)
    })
    serve(name, crd)
    reconciledAt.set(name, crd.metadata.resourceVersion ?? '')
    // Only a change can free names: a reconcile that wrote nothing wakes no one (two refused rivals would wake each other forever).
    if (crd !== stored) wakeRivals(all, name, crd.spec.group)
  }

  /** Deletes every instance, then lets the definition go; instances held by finalizers keep it a while longer. */
  const finalize = async (crd: CustomResourceDefinition): Promise<void> => {
    const name = crd.metadata.name ?? ''
    serve(name, crd)
    if (!crd.metadata.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) return
    const store = instanceStore(name)
    if (store) {
      crd = await updateStatus(crd, (next) =>
        setCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, formatTimestamp(now())),
      )
      await store.deleteCollection('', { allowWatchBookmarks: false }, {}, context())
      const remaining = (await store.list('', { allowWatchBookmarks: false })).items.length
      if (remaining > 0) {
        await updateStatus(crd, (next) =>
          setCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionCheck', message: `could not confirm zero CustomResources remaining: ${remaining} remaining` }, formatTimestamp(now())),
        )
        return retryLater(name)
      }
      crd = await updateStatus(crd, (next) =>
        setCondition(next, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, formatTimestamp(now())),
      )
    }
    serve(name, undefined)
    await crds.update(
      '',
      name,
      (current) => {
        current.metadata.finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== CUSTOM_RESOURCE_CLEANUP_FINALIZER)
        return current
      },
      context(),
    )
  }

  /** The store of the version objects are kept in (any served one reads them all). */
  const instanceStore = (name: string): ResourceObjects | undefined => {
    const entries = served.get(name)?.entries ?? []
    // The version whose form storage keeps (no conversion, or one to itself).
    const stored = entries.find((e) => !e.conversion || e.conversion.storageVersion === groupVersion(e)) ?? entries[0]
    return stored && stores.store(stored)
  }

  /** Follows the definitions from `resourceVersion`; a failed watch lists again. */
  const follow = async (resourceVersion: string): Promise<void> => {
    let from = resourceVersion
    while (!signal.aborted) {
      try {
        const watcher = crds.storage.watch(crds.prefix(''), { resourceVersion: from, signal })
        for await (const event of watcher) {
          if (event.type === 'BOOKMARK') continue
          from = event.object.metadata.resourceVersion ?? from
          void enqueue(event.object.metadata.name ?? '')
        }
      } catch (err) {
        if (signal.aborted) return
        logger.warn({ err: String(err) }, 'watch of CustomResourceDefinitions failed; listing again')
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
        try {
          const list = await crds.list('', { allowWatchBookmarks: false })
          from = list.metadata.resourceVersion ?? '0'
          const names = new Set(list.items.map((c) => c.metadata.name ?? ''))
          for (const name of [...served.keys(), ...names]) void enqueue(name)
        } catch {
          // The next round tries again.
        }
      }
    }
  }

  const ready = (async () => {
    const list = await crds.list('', { allowWatchBookmarks: false })
    await Promise.all(list.items.map((crd) => enqueue(crd.metadata.name ?? '')))
    void follow(list.metadata.resourceVersion ?? '0')
  })()

  return {
    ready,
    async resync() {
      const list = await crds.list('', { allowWatchBookmarks: false }, true)
      // Every definition as a finished reconcile served it, and none running or due again: serving matches the store
      // already (a reset that left the definitions as they were), and reconciling each would change nothing.
      const unchanged = (crd: CustomResourceDefinition): boolean => reconciledAt.get(crd.metadata.name ?? '') === crd.metadata.resourceVersion
      if (running.size === 0 && retries.size === 0 && list.items.length === reconciledAt.size && (list.items as CustomResourceDefinition[]).every(unchanged)) return
      const names = new Set(list.items.map((c) => c.metadata.name ?? ''))
      await Promise.all([...new Set([...served.keys(), ...names])].map((name) => enqueue(name)))
    },
    stop() {
      controller.abort()
      for (const timer of retries) clearTimeout(timer)
      retries.clear()
    },
  }
}
