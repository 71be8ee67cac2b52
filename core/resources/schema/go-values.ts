/**
 * The scalar types with their own JSON decoders upstream (metav1.Time,
 * resource.Quantity, metav1.Duration): what they accept, the stored form
 * they leave, and the error text their decoders give when they refuse.
 */
import { daysInMonth, unixSeconds, utcSecondText } from '../../machinery/civil-time.js'
import { parseGoDuration } from '../../machinery/duration.js'
import { canonicalQuantity } from './quantity.js'

/** Go's text for a value a string decoder refused: `json: cannot unmarshal number into Go value of type string`. */
export function notAString(kind: string): string {
  return `json: cannot unmarshal ${kind} into Go value of type string`
}

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00'
const RFC3339_MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00'

/**
 * The layout elements of RFC 3339 in the order Go's time.Parse reads them.
 * Time takes a fraction of any length after the seconds (and drops it);
 * MicroTime's layout asks for exactly six digits.
 */
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
]
const SECOND: readonly [layout: string, pattern: RegExp] = ['05', /^\d{2}(\.\d+)?/]
const MICRO_SECOND: readonly (readonly [layout: string, pattern: RegExp])[] = [
  ['05', /^\d{2}/],
  ['.000000', /^\.\d{6}/],
]
const ZONE: readonly [layout: string, pattern: RegExp] = ['Z07:00', /^(Z|[+-]\d{2}:\d{2})/]

const RANGES: readonly [index: number, max: number, what: string][] = [
  [2, 12, 'month'],
  [4, 31, 'day'],
  [6, 23, 'hour'],
  [8, 59, 'minute'],
  [10, 59, 'second'],
]

/**
 * Checks an RFC 3339 time as Go's time.Parse does; returns its UTC form with
 * whole seconds (Time: any fraction is dropped) or microseconds (MicroTime),
 * as upstream stores it, or the parse error text. Computed on the calendar
 * directly, so every year from 0001 to 9999 comes back as written.
 */
export function parseTime(value: string, micro: boolean): { value: string } | { error: string } {
  // The same few times come again and again (an object's creation, its managed fields' times, conditions).
  // Only text as long as a time is kept: a caller's long string is parsed (and refused) each time.
  if (value.length > LONGEST_TIME_TEXT) return parseTimeText(value, micro)
  const cache = micro ? parsedMicroTimes : parsedTimes
  let parsed = cache.get(value)
  if (!parsed) {
    if (cache.size >= PARSED_TIMES_KEPT) cache.clear()
    parsed = Object.freeze(parseTimeText(value, micro))
    cache.set(value, parsed)
  }
  return parsed
}

const PARSED_TIMES_KEPT = 256
/** 2006-01-02T15:04:05.999999999+07:00 */
const LONGEST_TIME_TEXT = 35
const parsedTimes = new Map<string, Readonly<{ value: string } | { error: string }>>()
const parsedMicroTimes = new Map<string, Readonly<{ value: string } | { error: string }>>()

function parseTimeText(value: string, micro: boolean): { value: string } | { error: string } {
  const layout = micro ? RFC3339_MICRO_LAYOUT : RFC3339_LAYOUT
  const parts: string[] = []
  let rest = value
  for (const [element, pattern] of [...ELEMENTS, ...(micro ? MICRO_SECOND : [SECOND]), ZONE]) {
    const m = pattern.exec(rest)
    if (!m) {
      return { error: `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(element)}` }
    }
    parts.push(m[0])
    rest = rest.slice(m[0].length)
  }
  if (rest) return { error: `parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(rest)}` }
  const n = (index: number): number => Number.parseInt(parts[index] ?? '', 10)
  for (const [index, max, what] of RANGES) {
    const v = n(index)
    if (v > max || ((what === 'month' || what === 'day') && v < 1)) return { error: `parsing time ${JSON.stringify(value)}: ${what} out of range` }
  }
  const [year, month, day] = [n(0), n(2), n(4)]
  if (day > daysInMonth(year, month)) return { error: `parsing time ${JSON.stringify(value)}: day out of range` }
  const zone = parts[parts.length - 1] ?? 'Z'
  let offset = 0
  if (zone !== 'Z') {
    const hours = Number(zone.slice(1, 3))
    const minutes = Number(zone.slice(4, 6))
    if (hours > 24) return { error: `parsing time ${JSON.stringify(value)}: time zone offset hour out of range` }
    if (minutes > 60) return { error: `parsing time ${JSON.stringify(value)}: time zone offset minute out of range` }
    offset = (zone[0] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60)
  }
  const seconds = unixSeconds(year, month, day, n(6), n(8), Number.parseInt(parts[10] ?? '', 10)) - offset
  const text = utcSecondText(seconds)
  // An offset moves whole minutes: the fraction stays as written.
  return { value: micro ? `${text}${parts[11] ?? ''}Z` : `${text}Z` }
}

/** Whether a parsed (UTC) Time or MicroTime is Go's zero time, 0001-01-01T00:00:00Z, which upstream writes as null. */
export function isGoZeroTimeText(text: string): boolean {
  return text === '0001-01-01T00:00:00Z' || text === '0001-01-01T00:00:00.000000Z'
}

// The same language as the message's expression, written so that a run of digits is split between the groups one way only:
// `[0-9.]+` followed by `[0-9]*` backtracks through every split of a long run that fails at its end (minutes for a million digits).
const QUANTITY_RE = /^([+-]?[0-9.]+)((?:[eEinumkKMGTP]+[-+]?|[-+])[0-9]*)?$/
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
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(number)) return { error: 'unable to parse numeric part of quantity' }
  if (!QUANTITY_SUFFIXES.has(suffix) && !/^[eE][-+]?\d+$/.test(suffix)) return { error: "unable to parse quantity's suffix" }
  return { value: canonicalQuantity(text) ?? text }
}

/** Checks a Go duration string (metav1.Duration); returns the error text when malformed. */
export function durationError(value: string): string | undefined {
  return parseGoDuration(value) === undefined ? `time: invalid duration ${JSON.stringify(value)}` : undefined
}
