/**
 * Scalar flag values, read as upstream's flag library reads them: Go's
 * strconv for booleans and numbers, time.ParseDuration for durations,
 * resource.Quantity for byte sizes. Each parser returns the typed value or
 * the reason shown after `invalid argument "x" for "--flag" flag: `.
 */
import { parseGoDuration } from '../../machinery/duration.js'

export type Parsed<T> = { value: T } | { reason: string }

export const ok = <T>(value: T): Parsed<T> => ({ value })
export const bad = (reason: string): { reason: string } => ({ reason })

/** strconv.ParseBool's spellings. */
const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True'])
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False'])

export function parseBool(text: string): Parsed<boolean> {
  if (TRUE.has(text)) return ok(true)
  if (FALSE.has(text)) return ok(false)
  return bad('must be a boolean (true or false)')
}

/**
 * Go's integer literal with base prefix, as pflag's int flags read it
 * (strconv.ParseInt(s, 0, 64)): `42`, `-7`, `0x1f`, `0o17`, `017`, `0b101`, `1_000`.
 */
function parseGoInteger(text: string): bigint | undefined {
  const m = /^([+-]?)(0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?[0-7])+|[1-9](?:_?[0-9])*|0)$/.exec(text)
  if (!m) return undefined
  let digits = (m[2] ?? '').replaceAll('_', '')
  // A bare leading zero means octal; BigInt wants the 0o prefix for that.
  if (/^0[0-7]+$/.test(digits)) digits = `0o${digits.slice(1)}`
  const n = BigInt(digits.replace(/^0([XBO])/, (_, p: string) => `0${p.toLowerCase()}`))
  return m[1] === '-' ? -n : n
}

function integerIn(text: string, min: bigint, max: bigint): Parsed<number> {
  const n = parseGoInteger(text)
  if (n === undefined) return bad('must be an integer')
  if (n < min || n > max) return bad('value out of range')
  return ok(Number(n))
}

/** Go's `int` flags, range-checked to 32 bits so that a value means the same on every platform. */
export function parseInt32(text: string): Parsed<number> {
  return integerIn(text, -(2n ** 31n), 2n ** 31n - 1n)
}

/** Go's `int64` flags; kept to what a JavaScript number holds exactly. */
export function parseInt64(text: string): Parsed<number> {
  return integerIn(text, BigInt(Number.MIN_SAFE_INTEGER), BigInt(Number.MAX_SAFE_INTEGER))
}

/** klog's verbosity Level: a decimal uint32. */
export function parseLevel(text: string): Parsed<number> {
  if (!/^\d+$/.test(text)) return bad('must be a non-negative integer')
  const n = BigInt(text)
  return n > 2n ** 32n - 1n ? bad('value out of range') : ok(Number(n))
}

/** strconv.ParseFloat for finite numbers: `0.001`, `.5`, `1e-3`, `10`. */
export function parseFloat64(text: string): Parsed<number> {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return bad('must be a number')
  const n = Number(text)
  return Number.isFinite(n) ? ok(n) : bad('value out of range')
}

/** A Go duration (`300ms`, `1m30s`, `1h0m0s`, `0`) as milliseconds. */
export function parseDuration(text: string): Parsed<number> {
  const ms = parseGoDuration(text)
  if (ms === undefined) return bad(`time: invalid duration ${JSON.stringify(text)} (use Go syntax like 1m0s, 30s, 500ms)`)
  return ok(ms)
}

const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 }
// Upstream's quantities spell kilo `k`; `K` is accepted too because upstream's own help writes `1K`.
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 }
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\d+)|([numkKMGTPE]))?$/

/**
 * A byte size written as a quantity: plain bytes (`512`), multiples of 1000
 * (`1k`, `3M`, `4G`), of 1024 (`2Ki`, `5Mi`, `6Gi`) or an exponent (`1e3`).
 * Rounded up to whole bytes, as Quantity.Value() does.
 */
export function parseQuantity(text: string): Parsed<number> {
  const m = QUANTITY.exec(text)
  if (!m) return bad("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkMGTP]*[-+]?[0-9]*)$'")
  const [, number = '', binary, exponent, decimal] = m
  const scale = binary ? (BINARY_SUFFIX[binary] ?? 1) : exponent ? 10 ** Number(exponent) : decimal ? (DECIMAL_SUFFIX[decimal] ?? 1) : 1
  // The small epsilon keeps float noise (0.1 * 3) from rounding an exact size up; `+ 0` turns -0 into 0.
  const bytes = Math.ceil(Number(number) * scale - 1e-9) + 0
  if (bytes < 0) return bad('must not be negative')
  if (!Number.isSafeInteger(bytes)) return bad('value out of range')
  return ok(bytes)
}
