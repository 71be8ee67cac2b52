/**
 * Which stored resources the garbage collector follows, and which resource an
 * owner reference's apiVersion and kind name (upstream asks the REST mapper).
 */
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'
import type { StoredResources } from './stored-resources.js'

export interface WatchedResource {
  entry: ResourceEntry
  /** The storage prefix of every object of the resource. */
  prefix: string
}

/** One entry per storage prefix (see StoredResources.storedResources). */
export function watchedResources(stores: StoredResources): WatchedResource[] {
  return stores.storedResources().map((store) => ({ entry: store.entry, prefix: store.prefix('') }))
}

/** `apps/v1` as { group: 'apps', version: 'v1' }, `v1` as the core group. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

/**
 * The resource an owner reference names. Any served version of the group
 * will do when the named one is not served: the object is the same.
 */
export function resolveOwnerKind(catalogue: Catalogue, apiVersion: string, kind: string): ResourceEntry | undefined {
  const { group, version } = splitApiVersion(apiVersion)
  const candidates = catalogue.entries.filter((e) => !e.virtualCreate && e.group === group && e.kind === kind)
  return candidates.find((e) => e.version === version) ?? candidates[0]
}
