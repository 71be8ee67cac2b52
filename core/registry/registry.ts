/** The stores of every catalogue entry over one storage, built lazily and kept. */
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'
import { convertingStorage } from '../resources/conversion/storage.js'
import { namespaces } from '../resources/core/namespaces.js'
import type { Storage } from '../storage/interface.js'
import { namespaceGate } from './namespace-gate.js'
import { DEFAULT_STORAGE_PREFIX, type NamespaceGate, ResourceStore, type StorePolicy } from './store.js'

export class Registry {
  private readonly stores = new Map<ResourceEntry, ResourceStore>()
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

  /** Every stored (not virtual) namespaced resource: what a namespace's deletion must empty. */
  namespacedStores(): ResourceStore[] {
    return this.catalogue.entries.filter((e) => e.namespaced && !e.virtualCreate).map((e) => this.store(e))
  }
}
