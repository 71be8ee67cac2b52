/**
 * How objects sit in etcd: the key exactly as the registry built it (UTF-8
 * bytes, so etcd's byte order is the contract's key order for ASCII keys), the
 * value the codec's bytes (no resourceVersion inside), and the key's
 * mod_revision as the object's resourceVersion.
 */

export function keyBytes(key: string): Buffer {
  return Buffer.from(key, 'utf8')
}

/**
 * The end of the range holding every key that starts with `prefix`: the
 * prefix with its last byte below 0xff incremented, as etcd's clients compute it.
 */
export function prefixEnd(prefix: string): Buffer {
  const end = keyBytes(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1
      return end.subarray(0, i + 1)
    }
  }
  // Only 0xff bytes: the range runs to the end of the keyspace.
  return Buffer.from([0])
}

/** The key range a list or watch of `prefix` covers: a prefix ending in `/`, else exactly that key. */
export function keyRange(prefixOrKey: string): { key: Buffer; range_end?: Buffer } {
  return prefixOrKey.endsWith('/') ? { key: keyBytes(prefixOrKey), range_end: prefixEnd(prefixOrKey) } : { key: keyBytes(prefixOrKey) }
}
