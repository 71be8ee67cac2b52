/**
 * `storageVersionHash` in legacy discovery (`/api/v1`, `/apis/<g>/<v>`): a
 * short hash of the group/version/kind a resource is stored as, which tells
 * clients (storage migrators) when the stored form changed. Computed as
 * upstream's discovery.StorageVersionHash does: base64 of the first 8 bytes
 * of the SHA-256 of `<group>/<version>/<kind>` (`/v1/Pod` for the core
 * group). Versions of one resource share the hash of their storage version.
 *
 * Web Crypto digests are asynchronous, so the hashes are worked out once per
 * catalogue change and kept, not per request.
 */
import { base64Encode } from '../machinery/base64.js'
import { type Catalogue, groupVersion, type ResourceEntry } from '../resources/catalogue.js'

export interface StorageKind {
  group: string
  version: string
  kind: string
}

/** Upstream's StorageVersionHash of a group/version/kind. */
export async function storageVersionHash({ group, version, kind }: StorageKind): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${group}/${version}/${kind}`))
  return base64Encode(new Uint8Array(digest).subarray(0, 8))
}

/**
 * The group/version/kind an entry's objects are stored as: its own, or its
 * conversion's storage version. Undefined for resources upstream does not
 * store (the access reviews, bindings, component statuses), which discovery
 * lists without a hash.
 */
export function storageKindOf(entry: ResourceEntry): StorageKind | undefined {
  if (entry.virtualCreate || entry.computed) return undefined
  const stored = entry.conversion?.storageVersion ?? groupVersion(entry)
  const slash = stored.indexOf('/')
  const [group, version] = slash < 0 ? ['', stored] : [stored.slice(0, slash), stored.slice(slash + 1)]
  return { group, version, kind: entry.kind }
}

/** The hashes of a catalogue's stored entries, worked out again only when the catalogue changed. */
export class StorageVersionHashes {
  /** By `group/version/kind`: a custom resource coming back or a new generation reuses what is known. */
  private readonly known = new Map<string, string>()
  private current: { generation: number; hashes: Promise<ReadonlyMap<ResourceEntry, string>> } | undefined

  constructor(private readonly catalogue: Catalogue) {}

  /** Each stored entry's hash, for the catalogue as it is now. */
  hashes(): Promise<ReadonlyMap<ResourceEntry, string>> {
    const generation = this.catalogue.generation
    if (this.current?.generation !== generation) this.current = { generation, hashes: this.compute(this.catalogue.entries) }
    return this.current.hashes
  }

  private async compute(entries: readonly ResourceEntry[]): Promise<ReadonlyMap<ResourceEntry, string>> {
    const out = new Map<ResourceEntry, string>()
    for (const entry of entries) {
      const kind = storageKindOf(entry)
      if (!kind) continue
      const key = `${kind.group}/${kind.version}/${kind.kind}`
      let hash = this.known.get(key)
      if (hash === undefined) {
        hash = await storageVersionHash(kind)
        this.known.set(key, hash)
      }
      out.set(entry, hash)
    }
    return out
  }
}
