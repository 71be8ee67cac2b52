/**
 * The daemon's storage, chosen by the persistence flags: etcd when
 * `--kvstore-servers` is given, else the embedded durable store in
 * `--data-dir`. Either way the daemon gets one Storage, the health checks
 * core serves as `/healthz/etcd` and `/readyz/etcd`, and one close().
 * The workers of `--workers` all open the embedded store's one file
 * (`sharing`), and tell each other of their commits.
 */
import type { FlagValues } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { codecFor } from '../../../core/storage/codec.js'
import { type StorageFactory, singleStorage } from '../../../core/storage/factory.js'
import type { Storage } from '../../../core/storage/interface.js'
import type { ValueTransformer } from '../../../core/storage/value/transformer.js'
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
  /** Each etcd cluster's health read within a time-out, main first (`componentstatuses`); none for the embedded store. */
  clusterChecks: ((timeoutMs: number) => Promise<void>)[]
  close(): Promise<void>
}

/** How long one size query may take, as upstream bounds its storage monitor's call. */
export const SIZE_TIMEOUT_MS = 1000

export type PersistenceFlags = Pick<
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

/** Each key's value transformer (`--encryption-provider-config`); the codec's bytes as they are when absent. */
export type TransformerFor = ((key: string) => ValueTransformer) | undefined

/** How a worker of `--workers` shares the embedded store with the others. */
export interface EmbeddedSharing {
  /** Tells the other workers that this one committed. */
  committed(): void
  /** `listener` hears of the other workers' commits. */
  onOthersCommitted(listener: () => void): void
}

async function openEmbedded(
  values: PersistenceFlags,
  logger: Logger,
  transformerFor: TransformerFor,
  openSqlite: SqliteOpener,
  sharing: EmbeddedSharing | undefined,
): Promise<DaemonStorage> {
  const dataDir = values['data-dir'] || DEFAULT_DATA_DIR
  const storage = await openEmbeddedStoreWith(
    {
    dataDir,
    codec: codecFor(values['storage-media-type']),
    ...(transformerFor ? { transformerFor } : {}),
    compactionIntervalMs: values['kvstore-compaction-interval'],
    onCompactionError: (err) => logger.warn({ err: String(err) }, 'compacting the embedded store failed'),
    ...(sharing ? { shared: { onCommit: () => sharing.committed() } } : {}),
    },
    openSqlite,
  ).catch((err: Error) => {
    throw new StorageStartupError(err.message)
  })
  sharing?.onOthersCommitted(() => storage.changed())
  const alive = async (): Promise<void> => void (await storage.currentRevision())
  return {
    storage,
    factory: singleStorage(storage),
    description: `the embedded store in ${dataDir}`,
    healthz: alive,
    readyz: alive,
    sizes: async () => [await storage.sizeBytes().catch(() => undefined)],
    clusterChecks: [],
    close: () => storage.close(),
  }
}

/** The runtime's SQLite driver for the embedded store (DaemonRuntime.openSqlite). */
type SqliteOpener = (path: string) => SqlDriver

/** Opens the storage the flags select; throws StorageStartupError with the reason. */
export function openDaemonStorage(
  values: PersistenceFlags,
  logger: Logger,
  transformerFor: TransformerFor,
  openSqlite: SqliteOpener,
  sharing?: EmbeddedSharing,
): Promise<DaemonStorage> {
  // The etcd client (gRPC, protobuf) is loaded only when etcd is chosen: the embedded store starts without it.
  if (values['kvstore-servers'].length > 0) return import('./open-etcd.js').then(({ openEtcd }) => openEtcd(values, logger, transformerFor))
  if (values['storage-backend'] !== '') {
    // Upstream's rule: naming the etcd backend without servers is an error.
    return Promise.reject(new StorageStartupError('--kvstore-servers must be specified with --storage-backend'))
  }
  return openEmbedded(values, logger, transformerFor, openSqlite, sharing)
}
