/**
 * Per-resource etcd servers (`--kvstore-servers-overrides`, upstream's
 * `--etcd-servers-overrides`): `group/resource#url;url`, the core group
 * written empty (`/events#http://127.0.0.1:2381`). Keys of an overridden
 * resource go to its own etcd; everything else to the main one. Each etcd
 * has its own revisions, so an overridden resource's resourceVersions come
 * from its etcd, as upstream.
 */
import { builtinStoragePath } from '../../../core/resources/builtin.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import type { StorageFactory } from '../../../core/storage/factory.js'
import type {
  ListOptions,
  ListResult,
  Preconditions,
  ReadOptions,
  Storage,
  TryUpdate,
  UpdateOptions,
  Watcher,
  WatchOptions,
} from '../../../core/storage/interface.js'

export interface ServersOverride {
  /** '' for the core group. */
  group: string
  resource: string
  servers: string[]
}

const FORMAT_ERROR =
  '--kvstore-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated'

/** Reads the flag's values; throws with upstream's message for a malformed one. */
export function parseServersOverrides(values: readonly string[]): ServersOverride[] {
  return values.map((value) => {
    const tokens = value.split('#')
    const resourceTokens = tokens[0]?.split('/') ?? []
    if (tokens.length !== 2 || resourceTokens.length !== 2) throw new Error(FORMAT_ERROR)
    const [group = '', resource = ''] = resourceTokens
    return { group, resource, servers: tokens[1]!.split(';') }
  })
}

/**
 * Where an overridden resource's keys live under `root` (--kvstore-prefix):
 * its storage path in upstream's layout, which differs from the resource
 * name for some (`/nodes` is under `minions/`, `/services` under
 * `services/specs/`, beside `services/endpoints/`).
 */
export function overrideKeyPrefix(root: string, override: Pick<ServersOverride, 'group' | 'resource'>): string {
  return `${root.replace(/\/+$/, '')}/${builtinStoragePath(override.group, override.resource)}/`
}

export interface StorageRoute {
  /** Keys starting with this (ending in `/`) go to `storage`. */
  keyPrefix: string
  storage: Storage
}

/**
 * The daemon's storage factory: a resource whose key prefix an override
 * names gets that override's etcd, every other one the main etcd. Matching
 * the prefix, not the name, keeps resources stored together (events in two
 * groups) in one etcd, as upstream's cohabitating resources.
 */
export function overridesFactory(main: Storage, routes: readonly StorageRoute[]): StorageFactory {
  return { storageFor: ({ prefix }) => routes.find((r) => r.keyPrefix === prefix)?.storage ?? main }
}

/** A Storage that sends each key (and each list or watch prefix) to the store its resource lives in. */
export class StorageRouter implements Storage {
  private readonly routes: StorageRoute[]

  constructor(
    private readonly fallback: Storage,
    routes: readonly StorageRoute[],
  ) {
    // Longest prefix first, so a more specific route wins.
    this.routes = [...routes].sort((a, b) => b.keyPrefix.length - a.keyPrefix.length)
  }

  /** The store that holds `key` (or every key under the prefix `key`). */
  storageFor(key: string): Storage {
    return this.routes.find((r) => key.startsWith(r.keyPrefix))?.storage ?? this.fallback
  }

  create(key: string, obj: KubeObject): Promise<KubeObject> {
    return this.storageFor(key).create(key, obj)
  }

  get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined> {
    return this.storageFor(key).get(key, opts)
  }

  list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    return this.storageFor(prefix).list(prefix, opts)
  }

  guaranteedUpdate(key: string, tryUpdate: TryUpdate, opts?: UpdateOptions): Promise<KubeObject> {
    return this.storageFor(key).guaranteedUpdate(key, tryUpdate, opts)
  }

  delete(
    key: string,
    opts?: { preconditions?: Preconditions; validate?: (current: KubeObject) => void | Promise<void> },
  ): Promise<KubeObject> {
    return this.storageFor(key).delete(key, opts)
  }

  watch(prefix: string, opts?: WatchOptions): Watcher {
    return this.storageFor(prefix).watch(prefix, opts)
  }

  count(prefix: string): Promise<number> {
    return this.storageFor(prefix).count(prefix)
  }

  /** The main store's revision: an overridden resource's revisions are its own etcd's. */
  currentRevision(): Promise<number> {
    return this.fallback.currentRevision()
  }

  async close(): Promise<void> {
    const all = new Set([this.fallback, ...this.routes.map((r) => r.storage)])
    await Promise.all([...all].map((s) => s.close()))
  }
}
