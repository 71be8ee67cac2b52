/**
 * JSON values as Go's fmt prints their decoded form (`%v` of
 * map[string]interface{}, []interface{}, int64, float64, bool, string):
 * upstream's strategic merge patch errors embed values printed this way, e.g.
 * `map: map[image:nginx] does not contain declared merge key: name`.
 */

export type JsonMap = Record<string, unknown>

export function isJsonMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `%v` of a float64: the shortest digits, in exponent form outside [1e-4, 1e6) as Go's %g does. */
function goFloat(x: number): string {
  const [mantissa = '0', exponent = '0'] = x.toExponential().split('e')
  const exp = Number(exponent)
  if (exp >= -4 && exp < 6) return String(x)
  const sign = exp < 0 ? '-' : '+'
  return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`
}

/** Go's `%v` of a decoded JSON value; map keys come out sorted, as fmt sorts them. */
export function goPrint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>'
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value)
  if (typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`
  if (isJsonMap(value)) {
    const keys = Object.keys(value).sort()
    return `map[${keys.map((k) => `${k}:${goPrint(value[k])}`).join(' ')}]`
  }
  return String(value)
}

/** `%s` of a value: strings as they are, anything else in Go's bad-verb form. */
export function goString(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return '%!s(<nil>)'
  return `%!s(${goTypeOf(value)}=${goPrint(value)})`
}

/** The Go type a JSON value decodes to (numbers keep their integer-ness, as the apiserver decodes them). */
export function goTypeOf(value: unknown): string {
  if (value === null || value === undefined) return '%!s(<nil>)'
  if (Array.isArray(value)) return '[]interface {}'
  if (isJsonMap(value)) return 'map[string]interface {}'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64'
  if (typeof value === 'boolean') return 'bool'
  return 'string'
}
