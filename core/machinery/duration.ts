/**
 * Go's time.Duration text (`300ms`, `1m30s`, `1h0m0s`): flags, `?timeout=`,
 * and the protobuf form of metav1.Duration all read and write it here.
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5 micro sign
  'μs': 1e-3, // U+03BC Greek mu: Go accepts both
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g
const WHOLE = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/

/**
 * Go's time.ParseDuration (`1h30m`, `1.5s`, `-300ms`, `0`), in milliseconds
 * (fractional below a millisecond); undefined when malformed.
 */
export function parseGoDuration(text: string): number | undefined {
  const sign = /^[-+]?/.exec(text)?.[0] ?? ''
  const body = text.slice(sign.length)
  // Go's special case: a bare (signed) 0 needs no unit.
  if (body === '0') return 0
  if (!WHOLE.test(body)) return undefined
  let total = 0
  for (const part of body.matchAll(PART)) total += Number(part[1]) * (UNIT_MS[part[2] ?? ''] ?? 0)
  return sign === '-' ? -total : total
}

/**
 * Go's time.Duration.String() of `ns` nanoseconds (an integer, as Go's
 * Duration is): `1h0m0s`, `1m30.5s`, `300ms`, `1.5µs`, `0s`.
 */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  const u = Math.abs(ns)
  const frac = (v: number, digits: number): string => {
    const scale = 10 ** digits
    const whole = Math.floor(v / scale)
    const rest = String(v % scale)
      .padStart(digits, '0')
      .replace(/0+$/, '')
    return rest ? `${whole}.${rest}` : String(whole)
  }
  if (u < 1e3) return `${sign}${u}ns`
  if (u < 1e6) return `${sign}${frac(u, 3)}µs`
  if (u < 1e9) return `${sign}${frac(u, 6)}ms`
  const secs = Math.floor(u / 1e9)
  let out = `${frac((secs % 60) * 1e9 + (u % 1e9), 9)}s`
  const mins = Math.floor(secs / 60)
  if (mins > 0) {
    out = `${mins % 60}m${out}`
    const hours = Math.floor(mins / 60)
    if (hours > 0) out = `${hours}h${out}`
  }
  return sign + out
}
