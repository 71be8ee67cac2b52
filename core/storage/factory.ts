/**
 * The storage factory (upstream's StorageFactory): the registry asks it for
 * each resource's storage, knowing the resource's group, name and key
 * prefix. Whatever differs per resource (the servers of
 * `--kvstore-servers-overrides`, the watch cache and its size, the value
 * transformer of encryption at rest) is decided here, in one place.
 */
import type { Storage } from './interface.js'

export interface StorageResource {
  /** '' for the core group. */
  group: string
  resource: string
  /** Where the resource's keys start (`/registry/minions/`), ending in `/`. */
  prefix: string
}

export interface StorageFactory {
  /** The storage that holds `resource`'s objects. Asked once per stored resource; versions of one resource share it. */
  storageFor(resource: StorageResource): Storage
}

/** Every resource in one storage: the embedded store, or memory in a test. */
export function singleStorage(storage: Storage): StorageFactory {
  return { storageFor: () => storage }
}
