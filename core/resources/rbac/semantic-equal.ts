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

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null) return true
  if (Array.isArray(v)) return v.length === 0
  return isMap(v) && Object.keys(v).length === 0
}
