/**
 * The daemon's etcd storage (`--kvstore-servers`, `--kvstore-servers-overrides`):
 * its own module, so that a daemon on the embedded store never loads the
 * etcd client.
 */
import type { Logger } from '../../../core/logging/logger.js'
import { codecFor } from '../../../core/storage/codec.js'
import { type StorageFactory, singleStorage } from '../../../core/storage/factory.js'
import { EtcdStorage } from './etcd.js'
import { readEtcdTlsFiles } from './etcd-client.js'
import { waitForStorage } from './etcd-health.js'
import { overrideKeyPrefix, overridesFactory, parseServersOverrides } from './etcd-overrides.js'
import { storageRoot } from '../../../core/options/apply-flags.js'
import { type DaemonStorage, type PersistenceFlags, SIZE_TIMEOUT_MS, StorageStartupError, type TransformerFor } from './open.js'

export async function openEtcd(values: PersistenceFlags, logger: Logger, transformerFor: TransformerFor): Promise<DaemonStorage> {
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
    clusterChecks: stores.map((s) => (timeoutMs: number) => s.checkHealth(timeoutMs)),
    close: () => Promise.all(stores.map((s) => s.close())).then(() => {}),
  }
}
