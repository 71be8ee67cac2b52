/**
 * Discovery documents built once per state of the catalogue. kubectl reads
 * `/api` and `/apis` at every command it runs without a cache, and every
 * client's REST mapper reads the group versions it meets; upstream serves
 * them from documents it made once. Each one is kept deep-frozen, so that
 * its encoded bytes are kept beside it (encoding/immutable.ts) and a read
 * writes them as they are. Only documents that exist are kept: a request
 * for a group nobody serves leaves nothing behind.
 */
import type { Catalogue } from '../resources/catalogue.js'
import { deepFreeze } from '../storage/objects.js'

export class DiscoveryMemo {
  private generation: number | undefined
  private readonly documents = new Map<string, Record<string, unknown>>()

  constructor(private readonly catalogue: Pick<Catalogue, 'generation'>) {}

  /** The document under `key` for the catalogue as it is now; `build` makes it when there is none yet. */
  of<T extends object>(key: string, build: () => T | undefined): T | undefined {
    if (this.generation !== this.catalogue.generation) {
      this.documents.clear()
      this.generation = this.catalogue.generation
    }
    const kept = this.documents.get(key) as T | undefined
    if (kept) return kept
    const built = build()
    if (!built) return undefined
    // A copy: a document may hold the catalogue entries' own arrays, which must not be frozen with it.
    const document = deepFreeze(structuredClone(built))
    this.documents.set(key, document as Record<string, unknown>)
    return document
  }
}
