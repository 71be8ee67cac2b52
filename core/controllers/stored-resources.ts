/**
 * What the controllers that work below the request path are handed instead
 * of the registry: the stored objects of the catalogue's resources, and the
 * catalogue (see client/stored-objects.ts for which work that is).
 */
import type { EntryObjects, ObjectStores } from '../client/object-stores.js'
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'

/** One resource's stored objects, named by its catalogue entry. */
export type ResourceObjects = EntryObjects<ResourceEntry>

/** Every resource's stored objects, and the catalogue that names them. */
export interface StoredResources extends ObjectStores<ResourceEntry> {
  readonly catalogue: Catalogue
}
