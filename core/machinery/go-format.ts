/**
 * Values printed the way Go's fmt prints them, because upstream's messages
 * embed Go-printed values and clients (and tests written against upstream)
 * read them verbatim. Three distinct renderings live here:
 *
 * - `formatValue`: the value of a field error, as upstream's ErrorBody shows it
 *   (`%q` for strings, `%v` for scalars, the `%#v` form for anything else);
 * - `%#v` literals of the Go types our validators refuse (`[]string{"a"}`,
 *   `v1.LabelSelector{...}`, `intstr.IntOrString{...}`), carried as GoLiteral;
 * - `%v`/`%s` of a decoded JSON value (`map[image:nginx]`), as the patch
 *   errors print them.
 */
import { isPlainObject } from './object.js'

/** A value already in Go syntax (`[]string{"10.0.0.5"}`), shown as it is. */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/** Renders a field error's value the way upstream's ErrorBody does for the types we report. */
export function formatValue(value: unknown): string {
  if (value instanceof GoLiteral) return value.text
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  // Upstream's ErrorBody turns a nil value into the string "null", which it then quotes.
  if (value === null || value === undefined) return '"null"'
  return JSON.stringify(value)
}

// --- %#v literals -------------------------------------------------------------

/** `%q` of a string field; anything else prints as its string form ("" when absent). */
export function goQuote(value: unknown): string {
  return JSON.stringify(typeof value === 'string' ? value : String(value ?? ''))
}

/** `%#v` of a slice of strings (or of a string type such as `networking.PolicyType`); absent is the nil slice. */
export function goStringSliceText(values: unknown, elementType = 'string'): string {
  if (!Array.isArray(values)) return `[]${elementType}(nil)`
  return `[]${elementType}{${values.map(goQuote).join(', ')}}`
}

/** A string slice as upstream's messages show one: `[]string{"a", "b"}`. */
export const goStrings = (values: readonly string[], elementType = 'string'): GoLiteral =>
  new GoLiteral(goStringSliceText(values, elementType))

/** `%#v` of a map[string]string: keys sorted, as fmt prints maps; absent is the nil map. */
export function goStringMapText(value: unknown): string {
  if (!isPlainObject(value)) return 'map[string]string(nil)'
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(value[k])}`)
  return `map[string]string{${entries.join(', ')}}`
}

export const goStringMap = (value: unknown): GoLiteral => new GoLiteral(goStringMapText(value))

/** One struct field: its Go name, its JSON name, and whether it is a number. */
export type GoField = readonly [goName: string, jsonName: string, kind?: 'int' | 'string']

/** `pkg.Type{A:"x", B:0}` from a JSON object, zero values for absent fields. */
export function goStruct(typeName: string, fields: readonly GoField[], value: unknown): GoLiteral {
  const obj = isPlainObject(value) ? value : {}
  const parts = fields.map(([goName, jsonName, kind]) => {
    const v = obj[jsonName]
    if (kind === 'int') return `${goName}:${typeof v === 'number' ? v : 0}`
    return `${goName}:${JSON.stringify(typeof v === 'string' ? v : '')}`
  })
  return new GoLiteral(`${typeName}{${parts.join(', ')}}`)
}

/**
 * `%#v` of a pointer field: `(*T)(nil)` when unset. Go prints a set pointer
 * as its address, which no client can rely on; `&<value>` stands in for it
 * (`(*int64)(&600)`, `(*string)(&"pv1")`, `(*T)(&{...})` for a struct).
 */
export function goPointerText(pointeeType: string, value: unknown, show: (v: unknown) => string): string {
  return value === undefined || value === null ? `(*${pointeeType})(nil)` : `(*${pointeeType})(&${show(value)})`
}

/** Go's `time.Time.String()` of a stored (UTC) timestamp; the zero time when absent. */
export function goTime(value: unknown): GoLiteral {
  if (typeof value !== 'string' || value === '') return new GoLiteral('0001-01-01 00:00:00 +0000 UTC')
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(value)
  if (!m) return new GoLiteral(value)
  const fraction = (m[3] ?? '').replace(/0+$/, '')
  return new GoLiteral(`${m[1]} ${m[2]}${fraction ? `.${fraction}` : ''} +0000 UTC`)
}

/** `%#v` of an intstr.IntOrString: Type 0 holds an int, Type 1 a string. */
export function goIntOrStringText(value: unknown): string {
  if (typeof value === 'string') return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(value)}}`
  return `intstr.IntOrString{Type:0, IntVal:${typeof value === 'number' ? value : 0}, StrVal:""}`
}

export const goIntOrString = (value: unknown): GoLiteral => new GoLiteral(goIntOrStringText(value))

function requirementText(r: unknown): string {
  const req = isPlainObject(r) ? r : {}
  return `v1.LabelSelectorRequirement{Key:${goQuote(req['key'])}, Operator:${goQuote(req['operator'])}, Values:${goStringSliceText(req['values'])}}`
}

/** `%#v` of a metav1.LabelSelector, the value upstream shows for a refused selector. */
export function goLabelSelector(selector: unknown): GoLiteral {
  // A nil selector is a field error's nil value, which upstream's ErrorBody prints as "null", quoted.
  if (!isPlainObject(selector)) return new GoLiteral('"null"')
  const expressions = selector['matchExpressions']
  const exprText = Array.isArray(expressions)
    ? `[]v1.LabelSelectorRequirement{${expressions.map(requirementText).join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)'
  return new GoLiteral(`v1.LabelSelector{MatchLabels:${goStringMapText(selector['matchLabels'])}, MatchExpressions:${exprText}}`)
}

/**
 * `%#v` of a strategy struct holding a type and an optional pointer
 * (`apps.DeploymentStrategy{Type:"x", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`).
 * Go prints a set pointer as its address, which no client can rely on; `&{...}` stands in for it.
 */
export function goStrategy(structName: string, pointerType: string, value: unknown): GoLiteral {
  const strategy = isPlainObject(value) ? value : {}
  const pointer = isPlainObject(strategy['rollingUpdate']) ? `(*${pointerType})(&{...})` : `(*${pointerType})(nil)`
  return new GoLiteral(`${structName}{Type:${goQuote(strategy['type'])}, RollingUpdate:${pointer}}`)
}

// --- %v of decoded JSON ---------------------------------------------------------

/** A decoded JSON object (Go's map[string]interface{}). */
export type JsonMap = Record<string, unknown>

export { isPlainObject as isJsonMap }

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
  return goPrintWithin(value, Infinity)!
}

/** `%v` of a value that is no list or map. */
function goScalar(value: unknown): string {
  if (value === null || value === undefined) return '<nil>'
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value)
  return String(value)
}

/**
 * goPrint's text when it has at most `maxChars` characters; undefined,
 * without printing (or visiting) the rest, when it would have more.
 * `keysOf` gives a map's keys in order: sortedKeysOnce for values printed
 * many times that do not change (stored objects in a table's cells).
 */
export function goPrintWithin(value: unknown, maxChars: number, keysOf: (map: Record<string, unknown>) => readonly string[] = sortedKeys): string | undefined {
  const parts: string[] = []
  let length = 0
  const add = (text: string): boolean => {
    length += text.length
    if (length > maxChars) return false
    parts.push(text)
    return true
  }
  /** The lists and maps being printed, innermost last, each with the next of its items to print. */
  const open: Array<{ list?: readonly unknown[]; map?: Record<string, unknown>; keys?: readonly string[]; size: number; next: number }> = []
  const enter = (v: unknown): boolean => {
    if (Array.isArray(v)) {
      open.push({ list: v, size: v.length, next: 0 })
      return add('[')
    }
    if (isPlainObject(v)) {
      const keys = keysOf(v)
      open.push({ map: v, keys, size: keys.length, next: 0 })
      return add('map[')
    }
    return add(goScalar(v))
  }
  if (!enter(value)) return undefined
  while (open.length > 0) {
    const frame = open[open.length - 1]!
    if (frame.next === frame.size) {
      open.pop()
      if (!add(']')) return undefined
      continue
    }
    const i = frame.next++
    const separator = i > 0 ? ' ' : ''
    const key = frame.keys?.[i]
    if (!add(key === undefined ? separator : `${separator}${key}:`)) return undefined
    if (!enter(key === undefined ? frame.list![i] : frame.map![key])) return undefined
  }
  return parts.join('')
}

const sortedKeys = (map: Record<string, unknown>): readonly string[] => Object.keys(map).sort()

const sortedKeysOf = new WeakMap<object, readonly string[]>()

/** A map's keys sorted once for all its printings: only for maps that do not change once printed. */
export function sortedKeysOnce(map: Record<string, unknown>): readonly string[] {
  let keys = sortedKeysOf.get(map)
  if (!keys) {
    keys = sortedKeys(map)
    sortedKeysOf.set(map, keys)
  }
  return keys
}

/** `%s` of a value: strings as they are, anything else in Go's bad-verb form. */
export function goString(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return '%!s(<nil>)'
  return `%!s(${goTypeOf(value)}=${goPrint(value)})`
}

/** The Go type a JSON value decodes to (numbers keep their integer-ness, as the apiserver decodes them), as `%s` prints it. */
export function goTypeOf(value: unknown): string {
  return value === null || value === undefined ? '%!s(<nil>)' : goTypeName(value)
}

/** A JSON value's kind as Go's decoder names it when it cannot unmarshal it (`json: cannot unmarshal array into ...`). */
export function goJsonKind(value: unknown): 'object' | 'array' | 'string' | 'number' | 'bool' {
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'string') return 'string'
  return typeof value === 'number' ? 'number' : 'object'
}

/** Go's `%T` of a decoded JSON value: `<nil>` for null. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>'
  if (Array.isArray(value)) return '[]interface {}'
  if (isPlainObject(value)) return 'map[string]interface {}'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64'
  if (typeof value === 'boolean') return 'bool'
  return 'string'
}
