/**
 * The storage backends side by side in one run: for memory, the embedded
 * store and etcd, creates and gets through the Storage interface and through
 * the in-process server over that same store (so the server's cost over its
 * store is a ratio), lists of 1k and 10k ConfigMaps, watch event delivery to
 * 1, 100 and 1000 watchers, and for etcd its own raw put rate with the etcd3
 * client at the same concurrency. Figures only: nothing here passes or fails.
 */
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { configMapBody, storedConfigMap } from './configmap-payload.js'
import { type LoadOptions, type LoadResult, runLoad } from './load.js'
import { type Backend, BACKEND_NAMES, type BackendName, etcdVersion, openBackend, storageCodec } from './storage-backends.js'
import { measureWatchLatency, type WatchLatency } from './watch-latency.js'

export interface StorageSettings {
  /** Creates, gets and etcd's raw puts: count, in flight, time bound. */
  load: LoadOptions
  /** Objects in each listed namespace. */
  listSizes: number[]
  /** Lists of each size, one at a time, bounded in time. */
  lists: { total: number; maxSeconds: number }
  /** Concurrent watchers of each watch figure, watching from a list's resourceVersion as informers do. */
  watchers: number[]
  /** The same without a resourceVersion, which the watch cache leaves to the backend. */
  watchersWithoutResourceVersion: number[]
  /** Writes per watch figure, bounded in time. */
  watchWrites: { total: number; maxSeconds: number }
}

export interface ListFigures {
  /** Objects the list returned. */
  objects: number
  /** Storage.list on the backend itself. */
  storage: LoadResult
  /** GET .../configmaps through the server: a consistent list, read from the backend. */
  server: LoadResult
  /** The same with `resourceVersion=0`, answered from the watch cache. */
  serverFromCache: LoadResult
}

export interface BackendFigures {
  name: BackendName
  storageCreates: LoadResult
  storageGets: LoadResult
  serverCreates: LoadResult
  serverGets: LoadResult
  lists: ListFigures[]
  watches: WatchLatency[]
  /** etcd only: the etcd3 client's plain put of the same bytes, no transaction. */
  rawPuts?: LoadResult
}

export interface StorageFigures {
  backends: BackendFigures[]
  /** The ConfigMap as a client sends it (JSON) and as the persistent stores keep it. */
  objectBytes: { json: number; stored: number }
  /** What `etcd --version` says. */
  etcdVersion: string
}

/** Unmeasured operations of each kind per backend before its clock starts (JIT, caches, the files' first pages). */
export const WARM_UP = 1000
/** How many distinct objects the get figures cycle through. */
export const GET_SET = 200
/** Where the Storage-level figures keep their objects: outside /registry, so no watch cache sees them. */
const STORAGE_PREFIX = '/bench/configmaps/'
const WATCH_NAMESPACE = (watchers: number, fromList: boolean) => `bench-watch-${watchers}${fromList ? '' : '-no-rv'}`
const LIST_NAMESPACE = (objects: number) => `bench-list-${objects}`

const BASE = 'http://in-process/api/v1'

async function post(server: ApiServer, path: string, body: string): Promise<number> {
  const res = await server.fetch(new Request(`${BASE}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
  await res.arrayBuffer()
  return res.status
}

async function getStatus(server: ApiServer, path: string): Promise<number> {
  const res = await server.fetch(new Request(`${BASE}${path}`))
  await res.arrayBuffer()
  return res.status
}

const createThroughServer = async (server: ApiServer, namespace: string, name: string): Promise<boolean> =>
  (await post(server, `/namespaces/${namespace}/configmaps`, configMapBody(name))) === 201

async function createNamespace(server: ApiServer, name: string): Promise<void> {
  const status = await post(server, '/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }))
  if (status !== 201) throw new Error(`creating namespace ${name} answered ${status}`)
}

/** Storage.create and Storage.get on the backend itself, the keys outside what the server stores. */
async function storageRates(backend: Backend, load: LoadOptions): Promise<{ creates: LoadResult; gets: LoadResult }> {
  const store = backend.storage
  const key = (name: string) => `${STORAGE_PREFIX}default/${name}`
  const warmUp = { total: WARM_UP, concurrency: load.concurrency, maxSeconds: load.maxSeconds }
  await runLoad(warmUp, async (i) => Boolean(await store.create(key(`warm-${i}`), storedConfigMap('default', `warm-${i}`))))
  await runLoad(warmUp, async (i) => Boolean(await store.get(key(`warm-${i % GET_SET}`))))
  const gets = await runLoad(load, async (i) => Boolean(await store.get(key(`warm-${i % GET_SET}`))))
  const creates = await runLoad(load, async (i) => Boolean(await store.create(key(`bench-${i}`), storedConfigMap('default', `bench-${i}`))))
  return { creates, gets }
}

/** etcd's own put of a stored ConfigMap's bytes, no transaction, the same number in flight as the creates. */
async function rawPutRate(backend: Backend, load: LoadOptions): Promise<LoadResult | undefined> {
  const client = backend.etcdClient
  if (!client) return undefined
  const value = Buffer.from(storageCodec.encode(storedConfigMap('default', 'raw-put-00000')))
  const put = async (key: string) => Boolean(await client.put(key).value(value).exec())
  await runLoad({ total: WARM_UP, concurrency: load.concurrency, maxSeconds: load.maxSeconds }, (i) => put(`/bench/raw/warm-${i}`))
  return runLoad(load, (i) => put(`/bench/raw/bench-${i}`))
}

async function serverRates(server: ApiServer, load: LoadOptions): Promise<{ creates: LoadResult; gets: LoadResult }> {
  const warmUp = { total: WARM_UP, concurrency: load.concurrency, maxSeconds: load.maxSeconds }
  const get = async (i: number) => (await getStatus(server, `/namespaces/default/configmaps/warm-${i % GET_SET}`)) === 200
  await runLoad(warmUp, (i) => createThroughServer(server, 'default', `warm-${i}`))
  await runLoad(warmUp, get)
  const gets = await runLoad(load, get)
  const creates = await runLoad(load, (i) => createThroughServer(server, 'default', `bench-${i}`))
  return { creates, gets }
}

/** Fills a namespace with `objects` ConfigMaps through the server, then lists it every way, one list at a time. */
async function listFigures(server: ApiServer, backend: Backend, objects: number, settings: StorageSettings): Promise<ListFigures> {
  const namespace = LIST_NAMESPACE(objects)
  await createNamespace(server, namespace)
  // Unmeasured; generous bound, as the lists need the objects.
  const filled = await runLoad({ total: objects, concurrency: settings.load.concurrency, maxSeconds: 120 }, (i) =>
    createThroughServer(server, namespace, `item-${String(i).padStart(5, '0')}`),
  )
  if (filled.errors) throw new Error(`filling ${namespace}: ${filled.errors} of ${filled.count} creates failed`)
  const path = `/namespaces/${namespace}/configmaps`
  const prefix = `/registry/configmaps/${namespace}/`
  // Checked once, outside the clock: every way of listing sees every object.
  const counts = [
    (await backend.storage.list(prefix)).items.length,
    ((await (await server.fetch(new Request(`${BASE}${path}`))).json()) as { items: unknown[] }).items.length,
    ((await (await server.fetch(new Request(`${BASE}${path}?resourceVersion=0`))).json()) as { items: unknown[] }).items.length,
  ]
  if (counts.some((n) => n !== filled.count)) throw new Error(`${namespace}: listed ${counts.join('/')} of ${filled.count} objects`)
  const sequential = { ...settings.lists, concurrency: 1 }
  return {
    objects: filled.count,
    storage: await runLoad(sequential, async () => (await backend.storage.list(prefix)).items.length === filled.count),
    server: await runLoad(sequential, async () => (await getStatus(server, path)) === 200),
    serverFromCache: await runLoad(sequential, async () => (await getStatus(server, `${path}?resourceVersion=0`)) === 200),
  }
}

async function measureBackend(name: BackendName, settings: StorageSettings, log: (text: string) => void): Promise<BackendFigures> {
  const backend = await openBackend(name)
  let server: ApiServer | undefined
  try {
    log(`  ${name}: Storage creates and gets${backend.etcdClient ? ', etcd raw puts' : ''} …`)
    const direct = await storageRates(backend, settings.load)
    const rawPuts = await rawPutRate(backend, settings.load)

    // The server over the same store, with its defaults: the watch cache is on.
    server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY }, { storage: backend.storage })
    await server.ready
    log(`  ${name}: server creates and gets …`)
    const served = await serverRates(server, settings.load)
    log(`  ${name}: lists of ${settings.listSizes.join(', ')} …`)
    const lists: ListFigures[] = []
    for (const objects of settings.listSizes) lists.push(await listFigures(server, backend, objects, settings))
    log(`  ${name}: watch delivery to ${settings.watchers.join(', ')} watchers …`)
    const watches: WatchLatency[] = []
    const runs = [
      ...settings.watchers.map((watchers) => ({ watchers, fromList: true })),
      ...settings.watchersWithoutResourceVersion.map((watchers) => ({ watchers, fromList: false })),
    ]
    for (const { watchers, fromList } of runs) {
      const namespace = WATCH_NAMESPACE(watchers, fromList)
      await createNamespace(server, namespace)
      const { total: writes, maxSeconds } = settings.watchWrites
      watches.push(await measureWatchLatency(server, backend.storage, { namespace, watchers, fromList, writes, maxSeconds }))
    }
    return {
      name,
      storageCreates: direct.creates,
      storageGets: direct.gets,
      serverCreates: served.creates,
      serverGets: served.gets,
      lists,
      watches,
      ...(rawPuts ? { rawPuts } : {}),
    }
  } finally {
    await server?.shutdown()
    await backend.close()
  }
}

export async function measureStorage(settings: StorageSettings, log: (text: string) => void): Promise<StorageFigures> {
  const backends: BackendFigures[] = []
  for (const name of BACKEND_NAMES) backends.push(await measureBackend(name, settings, log))
  return {
    backends,
    objectBytes: {
      json: configMapBody('bench-00000').length,
      stored: storageCodec.encode(storedConfigMap('default', 'bench-00000')).length,
    },
    etcdVersion: etcdVersion(),
  }
}
