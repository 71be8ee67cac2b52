/**
 * The scalar types with their own JSON decoders upstream (metav1.Time,
 * resource.Quantity, metav1.Duration): what they accept, the stored form
 * they leave, and the error text their decoders give when they refuse.
 */
import { parseGoDuration } from '../../machinery/duration.js'
import { canonicalQuantity } from './quantity.js'

/** Go's text for a value a string decoder refused: `json: cannot unmarshal number into Go value of type string`. */
export function notAString(kind: string): string {
  return `json: cannot unmarshal ${kind} into Go value of type string`
}

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00'
const RFC3339_MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00'

/** The layout elements of RFC 3339 in the order Go's time.Parse reads them. */
const ELEMENTS: readonly [layout: string, pattern: RegExp][] = [
  ['2006', /^\d{4}/],
  ['-', /^-/],
  ['01', /^\d{2}/],
  ['-', /^-/],
  ['02', /^\d{2}/],
  ['T', /^T/],
  ['15', /^\d{2}/],
  [':', /^:/],
  ['04', /^\d{2}/],
  [':', /^:/],
  ['05', /^\d{2}(\.\d+)?/],
  ['Z07:00', /^(Z|[+-]\d{2}:\d{2})/],
]

const RANGES: readonly [index: number, max: number, what: string][] = [
  [2, 12, 'month'],
  [4, 31, 'day'],
  [6, 23, 'hour'],
  [8, 59, 'minute'],
  [10, 59, 'second'],
]

/**
 * Checks an RFC 3339 time as Go's time.Parse does; returns its UTC form with
 * whole seconds (Time) or microseconds (MicroTime), as upstream stores it,
 * or the parse error text.
 */
export function parseTime(value: string, micro: boolean): { value: string } | { error: string } {
  const layout = micro ? RFC3339_MICRO_LAYOUT : RFC3339_LAYOUT
  const parts: string[] = []
  let rest = value
  for (const [element, pattern] of ELEMENTS) {
    const m = pattern.exec(rest)
    if (!m) {
      return { error: `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(element)}` }
    }
    parts.push(m[0])
    rest = rest.slice(m[0].length)
  }
  if (rest) return { error: `parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(rest)}` }
  for (const [index, max, what] of RANGES) {
    const n = Number.parseInt(parts[index] ?? '', 10)
    if (n > max || ((what === 'month' || what === 'day') && n < 1)) return { error: `parsing time ${JSON.stringify(value)}: ${what} out of range` }
  }
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) return { error: `parsing time ${JSON.stringify(value)}: day out of range` }
  const iso = new Date(ms).toISOString()
  if (!micro) return { value: iso.replace(/\.\d+Z$/, 'Z') }
  // Date keeps milliseconds; the microseconds come from the text when it is already in UTC.
  const fraction = /\.(\d+)/.exec(parts[10] ?? '')?.[1] ?? ''
  const micros = parts[11] === 'Z' ? fraction.padEnd(6, '0').slice(0, 6) : iso.slice(20, 23).padEnd(6, '0')
  return { value: `${iso.slice(0, 19)}.${micros}Z` }
}

const QUANTITY_RE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/
const QUANTITY_SUFFIXES = new Set(['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'])

/**
 * Checks a quantity as upstream's ParseQuantity does (numbers are accepted
 * too); returns the canonical text upstream stores, or the error.
 */
export function parseQuantity(raw: unknown): { value: string } | { error: string } {
  if (typeof raw !== 'string' && typeof raw !== 'number')
    return { error: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" }
  const text = String(raw).trim()
  const m = QUANTITY_RE.exec(text)
  if (!m) return { error: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" }
  const [, number = '', suffix = ''] = m
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(number)) return { error: 'unable to parse numeric part of quantity' }
  if (!QUANTITY_SUFFIXES.has(suffix) && !/^[eE][-+]?\d+$/.test(suffix)) return { error: "unable to parse quantity's suffix" }
  return { value: canonicalQuantity(text) ?? text }
}

/** Checks a Go duration string (metav1.Duration); returns the error text when malformed. */
export function durationError(value: string): string | undefined {
  return parseGoDuration(value) === undefined ? `time: invalid duration ${JSON.stringify(value)}` : undefined
}
