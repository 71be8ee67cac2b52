/**
 * Objects known to be large (megabytes): a write whose steps run in slices
 * marks the object it hands its store, and the store marks the object it
 * keeps, so that the passes after them (the store's encoding, the answer's)
 * run in steps too. Told by a mark rather than by their size, since telling
 * the size of a level of 250,000 keys is itself a pass over it.
 */
const large = new WeakSet<object>()

/** Marks `obj` as large, and gives it back. */
export function markedLarge<T extends object>(obj: T): T {
  large.add(obj)
  return obj
}

export function isMarkedLarge(obj: unknown): boolean {
  return typeof obj === 'object' && obj !== null && large.has(obj)
}
