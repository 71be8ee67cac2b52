/**
 * `--watch-cache-sizes`: `resource[.group]#size` per resource, as upstream's
 * ParseWatchCacheSizes reads it. Upstream sizes its caches itself now, so
 * only 0 still means something: no cache for that resource.
 */

/** Parses the flag's values into `{ "resource[.group]": size }`; throws with upstream's wording. */
export function parseWatchCacheSizes(values: readonly string[]): Record<string, number> {
  const sizes: Record<string, number> = {}
  for (const value of values) {
    const parts = value.split('#')
    if (parts.length !== 2) throw new Error(`invalid value of watch cache size: ${value}`)
    const [resource, size] = parts as [string, string]
    if (!/^[+-]?\d+$/.test(size)) throw new Error(`invalid size of watch cache size: ${value}`)
    const n = Number(size)
    if (n < 0) throw new Error(`watch cache size cannot be negative: ${value}`)
    sizes[resource] = n
  }
  return sizes
}

/** Whether a resource keeps its watch cache: every size but 0 leaves it on. */
export function watchCacheEnabled(sizes: Readonly<Record<string, number>>, group: string, resource: string): boolean {
  // No sizes given is the common case (each server asks for some sixty resources): no key to build and look up.
  if (Object.keys(sizes).length === 0) return true
  return sizes[group ? `${resource}.${group}` : resource] !== 0
}
