/** The stores of every catalogue entry, each over the storage the factory gives its resource, built lazily and kept. */
import { type AdmissionChain, emptyAdmissionChain } from '../admission/chain.js'
import { type Catalogue, groupVersion, type ResourceEntry, storagePath } from '../resources/catalogue.js'
import { convertingStorage } from '../resources/conversion/storage.js'
import type { KubeObject } from '../machinery/object.js'
import { resourceNotFound } from '../machinery/status-error.js'
import type { StorageFactory } from '../storage/factory.js'
import type { Storage } from '../storage/interface.js'
import { type AdmissionStep, runMutatingAdmission, runValidatingAdmission } from './admission-step.js'
import type { RequestContext } from './request-context.js'
import type { StoreHooks } from './store-hooks.js'
import { DEFAULT_STORAGE_PREFIX, ResourceStore, type StorePolicy } from './store.js'

export interface RegistryOptions {
  /** Where keys start (`--kvstore-prefix`), without a trailing slash. @default /registry */
  root?: string
  /** Server-wide settings the strategies consult, and the admission chain every write passes (none without one). */
  policy?: StorePolicy
  /** A resource's own steps around its writes (a Service's allocations), by `group/resource`. */
  hooks?: ReadonlyMap<string, StoreHooks>
}

export class Registry {
  // Weak: the entries of a custom resource go when its definition changes or goes.
  private readonly stores = new WeakMap<ResourceEntry, ResourceStore>()
  // One storage per key prefix: the versions of a resource share theirs.
  private readonly storages = new Map<string, Storage>()
  private readonly root: string
  private readonly policy: StorePolicy
  /** The chain every write passes: the enabled plugins, then the embedder's (core/admission/plugins.ts). */
  readonly admission: AdmissionChain

  constructor(
    readonly catalogue: Catalogue,
    private readonly factory: StorageFactory,
    private readonly options: RegistryOptions = {},
  ) {
    this.root = options.root ?? DEFAULT_STORAGE_PREFIX
    this.admission = options.policy?.admission ?? emptyAdmissionChain
    this.policy = { ...options.policy, admission: this.admission, kindRegistered: (apiVersion, kind) => this.builtinKindServed(apiVersion, kind) }
  }

  /**
   * Both phases of admission for a request whose object the store does not
   * write (an eviction, a review, a token request): the mutating plugins,
   * then the validating ones on what they made, as upstream's create handler
   * and the subresource's REST call them. Returns the admitted object.
   */
  async admit(entry: ResourceEntry, step: AdmissionStep & { object: KubeObject }, ctx: RequestContext): Promise<KubeObject> {
    const object = await runMutatingAdmission(this.admission.mutating, entry, step, ctx)
    await runValidatingAdmission(this.admission.validating, entry, { ...step, object }, ctx)
    return object
  }

  /** Whether a built-in resource of `kind` is served in `apiVersion` (what upstream's scheme knows, as near as this server can tell). */
  private builtinKindServed(apiVersion: string, kind: string): boolean {
    return this.catalogue.entries.some((e) => !e.schema && e.kind === kind && groupVersion(e) === apiVersion)
  }

  /** Where an entry's keys start under the root: its storage path in upstream's layout. */
  prefixOf(entry: ResourceEntry): string {
    return `${this.root}/${storagePath(entry)}/`
  }

  store(entry: ResourceEntry): ResourceStore {
    let store = this.stores.get(entry)
    if (!store) {
      const stored = this.storageOf(entry)
      // A version stored in another version's form sees the storage through its conversion.
      const storage = entry.conversion ? convertingStorage(stored, entry.conversion) : stored
      const hooks = this.options.hooks?.get(`${entry.group}/${entry.resource}`) ?? {}
      store = new ResourceStore(entry, storage, this.root, this.policy, hooks)
      this.stores.set(entry, store)
    }
    return store
  }

  /** The factory's storage for the entry's resource (before any version conversion), asked once per prefix. */
  storageOf(entry: ResourceEntry): Storage {
    const prefix = this.prefixOf(entry)
    let storage = this.storages.get(prefix)
    if (!storage) {
      storage = this.factory.storageFor({ group: entry.group, resource: entry.resource, prefix })
      this.storages.set(prefix, storage)
    }
    return storage
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

  /**
   * The store of a resource version as the catalogue serves it now. A
   * built-in entry switched off (--runtime-config) still has its stored
   * objects, read as they are; a reference to a resource the catalogue does
   * not serve and that is no entry is a 404.
   */
  served(resource: { group: string; version: string; resource: string } | ResourceEntry): ResourceStore {
    const entry = this.catalogue.lookup(resource.group, resource.version, resource.resource) ?? ('strategy' in resource ? resource : undefined)
    if (!entry) throw resourceNotFound()
    return this.store(entry)
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
