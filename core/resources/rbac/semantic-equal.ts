/**
 * Equality of decoded API values as upstream's equality.Semantic sees Go
 * values: an absent, null, empty list and empty map are all the zero value
 * and equal one another; map key order never matters, list order does.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((v, i) => semanticEqual(v, b[i]))
  }
  if (isMap(a) && isMap(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const key of keys) if (!semanticEqual(a[key], b[key])) return false
    return true
  }
  return a === b
}

/**
 * A text equal for two values semanticEqual takes as equal (zero values,
 * and map entries holding one, all read as absent), so that many values
 * are told apart through a set instead of against each other.
 */
export function semanticKey(v: unknown): string {
  if (isZero(v)) return '0'
  if (Array.isArray(v)) return `[${v.map(semanticKey).join(',')}]`
  if (isMap(v)) {
    const entries = Object.keys(v)
      .sort()
      .flatMap((key) => (isZero(v[key]) ? [] : [`${JSON.stringify(key)}:${semanticKey(v[key])}`]))
    return entries.length === 0 ? '0' : `{${entries.join(',')}}`
  }
  return JSON.stringify(v) ?? String(v)
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null) return true
  if (Array.isArray(v)) return v.length === 0
  return isMap(v) && Object.keys(v).length === 0
}
