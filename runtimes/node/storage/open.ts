/**
 * The daemon's storage, chosen by the persistence flags: etcd when
 * `--kvstore-servers` is given, else the embedded durable store in
 * `--data-dir`. Either way the daemon gets one Storage, the health checks
 * core serves as `/healthz/etcd` and `/readyz/etcd`, and one close().
 */
import type { FlagValues } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/ports.js'
import { codecFor } from '../../../core/storage/codec.js'
import { type StorageFactory, singleStorage } from '../../../core/storage/factory.js'
import type { Storage } from '../../../core/storage/interface.js'
import type { ValueTransformer } from '../../../core/storage/value/transformer.js'
import { EtcdStorage } from './etcd.js'
import { readEtcdTlsFiles } from './etcd-client.js'
import { waitForStorage } from './etcd-health.js'
import { overrideKeyPrefix, overridesFactory, parseServersOverrides } from './etcd-overrides.js'
import type { SqlDriver } from '../../../core/storage/sql/driver.js'
import { openEmbeddedStoreWith } from './embedded.js'

export interface DaemonStorage {
  /** The main store: the server's revision and health. */
  storage: Storage
  /** Each resource's store (the main one but for `--kvstore-servers-overrides`). */
  factory: StorageFactory
  /** What the log says the objects live in. */
  description: string
  /** `/healthz/etcd` (within --kvstore-healthcheck-timeout) and `/readyz/etcd` (within --kvstore-readycheck-timeout). */
  healthz(): Promise<void>
  readyz(): Promise<void>
  /** Each storage cluster's database size in bytes, main first (`apiserver_storage_size_bytes`); undefined where it could not be read. */
  sizes(): Promise<(number | undefined)[]>
  close(): Promise<void>
}

/** How long one size query may take, as upstream bounds its storage monitor's call. */
const SIZE_TIMEOUT_MS = 1000

type PersistenceFlags = Pick<
  FlagValues,
  | 'data-dir'
  | 'storage-backend'
  | 'storage-media-type'
  | 'storage-initialization-timeout'
  | 'kvstore-servers'
  | 'kvstore-servers-overrides'
  | 'kvstore-prefix'
  | 'kvstore-cafile'
  | 'kvstore-certfile'
  | 'kvstore-keyfile'
  | 'kvstore-compaction-interval'
  | 'kvstore-healthcheck-timeout'
  | 'kvstore-readycheck-timeout'
  | 'event-ttl'
  | 'lease-reuse-duration-seconds'
>

/** The embedded store's directory when --data-dir is not given. */
export const DEFAULT_DATA_DIR = '/var/lib/apiserver'

/** A storage problem the user can fix; the daemon prints it and exits 1. */
export class StorageStartupError extends Error {}

/** The key root objects live under (`--kvstore-prefix`, upstream's default `/registry`), without a trailing slash. */
export function storageRoot(values: Pick<FlagValues, 'kvstore-prefix'>): string {
  const prefix = values['kvstore-prefix'].replace(/\/+$/, '')
  return prefix.startsWith('/') || prefix === '' ? prefix : `/${prefix}`
}

/** Each key's value transformer (`--encryption-provider-config`); the codec's bytes as they are when absent. */
type TransformerFor = ((key: string) => ValueTransformer) | undefined

async function openEtcd(values: PersistenceFlags, logger: Logger, transformerFor: TransformerFor): Promise<DaemonStorage> {
  const root = storageRoot(values)
  const codec = codecFor(values['storage-media-type'])
  const tls = await readEtcdTlsFiles({
    ...(values['kvstore-cafile'] ? { caFile: values['kvstore-cafile'] } : {}),
    ...(values['kvstore-certfile'] ? { certFile: values['kvstore-certfile'] } : {}),
    ...(values['kvstore-keyfile'] ? { keyFile: values['kvstore-keyfile'] } : {}),
  }).catch((err: Error) => {
    throw new StorageStartupError(err.message)
  })
  const eventTtlSeconds = Math.max(1, Math.round(values['event-ttl'] / 1000))
  const compactionIntervalMs = values['kvstore-compaction-interval']
  const stores: EtcdStorage[] = []
  const open = (endpoints: readonly string[]): EtcdStorage => {
    const store = new EtcdStorage({
      endpoints: [...endpoints],
      ...(tls ? { tls } : {}),
      codec,
      ...(transformerFor ? { transformerFor } : {}),
      healthKey: `${root}/health`,
      ttlSeconds: (key) => (key.startsWith(`${root}/events/`) ? eventTtlSeconds : undefined),
      leaseReuseDurationSeconds: values['lease-reuse-duration-seconds'],
    })
    store.startCompactor(compactionIntervalMs, (err) => logger.warn({ err: String(err) }, 'etcd compaction failed'))
    stores.push(store)
    return store
  }
  const main = open(values['kvstore-servers'])
  let factory: StorageFactory = singleStorage(main)
  try {
    const overrides = parseServersOverrides(values['kvstore-servers-overrides'])
    if (overrides.length)
      factory = overridesFactory(main, overrides.map((o) => ({ keyPrefix: overrideKeyPrefix(root, o), storage: open(o.servers) })))
    logger.info({ servers: values['kvstore-servers'] }, 'waiting for etcd')
    await waitForStorage((ms) => main.checkHealth(ms), {
      timeoutMs: values['storage-initialization-timeout'],
      checkTimeoutMs: values['kvstore-readycheck-timeout'],
    })
  } catch (err) {
    await Promise.allSettled(stores.map((s) => s.close()))
    throw new StorageStartupError(`storage initialization failed: ${(err as Error).message}`)
  }
  return {
    storage: main,
    factory,
    description: `etcd at ${values['kvstore-servers'].join(', ')} (prefix ${root || '/'})`,
    healthz: () => Promise.all(stores.map((s) => s.checkHealth(values['kvstore-healthcheck-timeout']))).then(() => {}),
    readyz: () => Promise.all(stores.map((s) => s.checkHealth(values['kvstore-readycheck-timeout']))).then(() => {}),
    sizes: () => Promise.all(stores.map((s) => s.dbSizeBytes(SIZE_TIMEOUT_MS).catch(() => undefined))),
    close: () => Promise.all(stores.map((s) => s.close())).then(() => {}),
  }
}

async function openEmbedded(values: PersistenceFlags, logger: Logger, transformerFor: TransformerFor, openSqlite: SqliteOpener): Promise<DaemonStorage> {
  const dataDir = values['data-dir'] || DEFAULT_DATA_DIR
  const storage = await openEmbeddedStoreWith(
    {
    dataDir,
    codec: codecFor(values['storage-media-type']),
    ...(transformerFor ? { transformerFor } : {}),
    compactionIntervalMs: values['kvstore-compaction-interval'],
    onCompactionError: (err) => logger.warn({ err: String(err) }, 'compacting the embedded store failed'),
    },
    openSqlite,
  ).catch((err: Error) => {
    throw new StorageStartupError(err.message)
  })
  const alive = async (): Promise<void> => void (await storage.currentRevision())
  return {
    storage,
    factory: singleStorage(storage),
    description: `the embedded store in ${dataDir}`,
    healthz: alive,
    readyz: alive,
    sizes: async () => [await storage.sizeBytes().catch(() => undefined)],
    close: () => storage.close(),
  }
}

/** The runtime's SQLite driver for the embedded store (DaemonRuntime.openSqlite). */
type SqliteOpener = (path: string) => SqlDriver

/** Opens the storage the flags select; throws StorageStartupError with the reason. */
export function openDaemonStorage(values: PersistenceFlags, logger: Logger, transformerFor: TransformerFor, openSqlite: SqliteOpener): Promise<DaemonStorage> {
  if (values['kvstore-servers'].length > 0) return openEtcd(values, logger, transformerFor)
  if (values['storage-backend'] !== '') {
    // Upstream's rule: naming the etcd backend without servers is an error.
    return Promise.reject(new StorageStartupError('--kvstore-servers must be specified with --storage-backend'))
  }
  return openEmbedded(values, logger, transformerFor, openSqlite)
}
