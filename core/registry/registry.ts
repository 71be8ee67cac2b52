/** The stores of every catalogue entry over one storage, built lazily and kept. */
import { type Catalogue, groupVersion, type ResourceEntry } from '../resources/catalogue.js'
import { convertingStorage } from '../resources/conversion/storage.js'
import { namespaces } from '../resources/core/namespaces.js'
import type { Storage } from '../storage/interface.js'
import { namespaceGate } from './namespace-gate.js'
import { DEFAULT_STORAGE_PREFIX, type NamespaceGate, ResourceStore, type StorePolicy } from './store.js'

export class Registry {
  // Weak: the entries of a custom resource go when its definition changes or goes.
  private readonly stores = new WeakMap<ResourceEntry, ResourceStore>()
  private readonly gate: NamespaceGate

  constructor(
    readonly catalogue: Catalogue,
    readonly storage: Storage,
    /** Where keys start (`--kvstore-prefix`), without a trailing slash. */
    private readonly root: string = DEFAULT_STORAGE_PREFIX,
    private readonly policy: StorePolicy = {},
  ) {
    const namespaceStore = this.store(namespaces)
    this.gate = namespaceGate(storage, (name) => namespaceStore.key('', name))
  }

  store(entry: ResourceEntry): ResourceStore {
    let store = this.stores.get(entry)
    if (!store) {
      // A version stored in another version's form sees the storage through its conversion.
      const storage = entry.conversion ? convertingStorage(this.storage, entry.conversion) : this.storage
      store = new ResourceStore(entry, storage, (ns, e, name) => this.gate(ns, e, name), this.root, this.policy)
      this.stores.set(entry, store)
    }
    return store
  }

  /**
   * One store per stored resource (versions of one resource share their
   * objects): the version kept in storage where there is one, else the first.
   */
  storedResources(): ResourceStore[] {
    const byPrefix = new Map<string, ResourceStore>()
    for (const entry of this.catalogue.entries) {
      if (entry.virtualCreate) continue
      const store = this.store(entry)
      const prefix = store.prefix('')
      const seen = byPrefix.get(prefix)
      if (!seen || (!isStorageVersion(seen.entry) && isStorageVersion(entry))) byPrefix.set(prefix, store)
    }
    return [...byPrefix.values()]
  }

  /** Every stored namespaced resource once: what a namespace's deletion must empty. */
  namespacedStores(): ResourceStore[] {
    return this.storedResources().filter((s) => s.entry.namespaced)
  }
}

/** Whether the entry's objects are stored in its own version (no conversion, or one to itself). */
export function isStorageVersion(entry: ResourceEntry): boolean {
  return !entry.conversion || entry.conversion.storageVersion === groupVersion(entry)
}
