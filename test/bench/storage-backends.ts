/**
 * The three storage backends the bench compares, opened as the daemon opens
 * them but from the built package (dist), so the server and its stores are
 * the code operators run: memory, the embedded store in a fresh temporary
 * directory, and etcd as one member on loopback. Both persistent stores keep
 * the protobuf envelope, the daemon's default `--storage-media-type`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Etcd3 } from 'etcd3'
import { MemoryStorage, type Storage } from 'kube-apiserver-ts'
import { codecFor } from '../../dist/core/storage/codec.js'
import type { Watcher, WatchOptions } from '../../dist/core/storage/interface.js'
import { EtcdStorage } from '../../dist/runtimes/node/storage/etcd.js'
import { openEmbeddedStore } from '../../dist/runtimes/node/storage/sqlite.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'

export const BACKEND_NAMES = ['memory', 'embedded', 'etcd'] as const
export type BackendName = (typeof BACKEND_NAMES)[number]

export const STORAGE_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf'
export const storageCodec = codecFor(STORAGE_MEDIA_TYPE)

export interface Backend {
  name: BackendName
  storage: CountingStorage
  /** etcd's own client on the same member, for its raw put rate; only for etcd. */
  etcdClient?: Etcd3
  close(): Promise<void>
}

/**
 * Passes everything through and counts the watches the backend itself is
 * asked for: with the watch cache on, a thousand client watches of one
 * resource open no backend watch of their own.
 */
export class CountingStorage implements Storage {
  watchesOpened = 0

  constructor(readonly inner: Storage) {}

  create: Storage['create'] = (key, obj) => this.inner.create(key, obj)
  get: Storage['get'] = (key, opts) => this.inner.get(key, opts)
  list: Storage['list'] = (prefix, opts) => this.inner.list(prefix, opts)
  guaranteedUpdate: Storage['guaranteedUpdate'] = (key, tryUpdate, opts) => this.inner.guaranteedUpdate(key, tryUpdate, opts)
  delete: Storage['delete'] = (key, opts) => this.inner.delete(key, opts)
  count: Storage['count'] = (prefix) => this.inner.count(prefix)
  currentRevision: Storage['currentRevision'] = () => this.inner.currentRevision()
  close: Storage['close'] = () => this.inner.close()

  watch(prefix: string, opts?: WatchOptions): Watcher {
    this.watchesOpened++
    return this.inner.watch(prefix, opts)
  }
}

export async function openBackend(name: BackendName): Promise<Backend> {
  switch (name) {
    case 'memory': {
      const storage = new CountingStorage(new MemoryStorage())
      return { name, storage, close: () => storage.close() }
    }
    case 'embedded': {
      const dataDir = await mkdtemp(join(tmpdir(), 'apiserver-bench-store-'))
      const storage = new CountingStorage(await openEmbeddedStore({ dataDir, codec: storageCodec }))
      return {
        name,
        storage,
        close: async () => {
          await storage.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    }
    case 'etcd': {
      const server = await EtcdServer.start()
      const storage = new CountingStorage(new EtcdStorage({ endpoints: [server.clientUrl], codec: storageCodec }))
      const etcdClient = server.client()
      return {
        name,
        storage,
        etcdClient,
        close: async () => {
          etcdClient.close()
          await storage.close()
          await server.destroy()
        },
      }
    }
  }
}

/** The etcd on PATH, as `etcd --version` names it (`3.4.23`). */
export function etcdVersion(): string {
  const out = execFileSync('etcd', ['--version'], { encoding: 'utf8' })
  return /etcd Version: (\S+)/.exec(out)?.[1] ?? 'of unknown version'
}
