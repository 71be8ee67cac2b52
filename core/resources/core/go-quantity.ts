/**
 * Resource quantities as upstream's validators see them: compared exactly,
 * shown as `Quantity.String()` in messages, and — where a whole Quantity or
 * ResourceList is the bad value of a field error — printed the way Go's
 * `%#v` prints the struct upstream's ParseQuantity builds.
 *
 * Stored quantities are already canonical (the decoder rewrites them), so
 * the struct is rebuilt from that canonical text; a quantity written in
 * another form ("1000" for "1k") prints as its canonical form would.
 */
import { parseQuantity, Quantity } from '../../cel/library/quantity.js'
import { GoLiteral } from '../../machinery/go-format.js'
import { isPlainObject } from '../../machinery/object.js'
import { canonicalQuantity } from '../schema/quantity.js'

const rawText = (raw: unknown): string => (typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '')

/** The quantity a stored value denotes (zero when absent or malformed, as Go's zero Quantity). */
export function quantityOf(raw: unknown): Quantity {
  return parseQuantity(rawText(raw)) ?? new Quantity(0n, 0)
}

/** `Quantity.String()`: its canonical text. */
export function quantityString(raw: unknown): string {
  const text = rawText(raw)
  return canonicalQuantity(text) ?? text
}

export const ZERO = new Quantity(0n, 0)

/** `q / 10^exponent` as an integer, rounded away from zero as upstream's ScaledValue rounds. */
export function scaledValue(q: Quantity, exponent: number): bigint {
  const shift = q.scale + exponent
  if (shift <= 0) return q.numerator * 10n ** BigInt(-shift)
  const divisor = 10n ** BigInt(shift)
  const whole = q.numerator / divisor
  if (q.numerator % divisor === 0n) return whole
  return q.numerator > 0n ? whole + 1n : whole - 1n
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }
const INT64_MAX = 2n ** 63n - 1n
const MAX_INT64_DIGITS = 18

interface QuantityParts {
  negative: boolean
  num: string
  denom: string
  suffix: string
}

/** The pieces upstream's parseQuantityString cuts a quantity into (leading zeros of the whole part dropped). */
function partsOf(text: string): QuantityParts | undefined {
  // `s`: the suffix takes any rest, line breaks too, so the match never backtracks through the digits.
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/s.exec(text)
  if (!m) return undefined
  const [, sign = '', whole = '', denom = '', suffix = ''] = m
  const num = whole.replace(/^0+/, '') || '0'
  // An all-zero quantity stops there: no fraction, no suffix.
  if (/^0*$/.test(whole) && !denom && !suffix) return { negative: sign === '-', num: '0', denom: '', suffix: '' }
  return { negative: sign === '-', num, denom, suffix }
}

/** Go's `%#v` of the Quantity upstream's ParseQuantity makes of `text`. */
function quantityStruct(text: string): string {
  const tail = (value: string, scale: number, s: string, format: string): string =>
    `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(s)}, Format:${JSON.stringify(format)}}`
  const p = partsOf(text)
  const big = `resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(0xc000000000)}, s:"", Format:`
  if (!p) return tail('0', 0, '', 'DecimalSI')
  const binary = BINARY_SUFFIX[p.suffix]
  const decimal = DECIMAL_SUFFIX[p.suffix] ?? (/^[eE][+-]?\d+$/.test(p.suffix) ? Number(p.suffix.slice(1)) : undefined)
  const format = binary !== undefined ? 'BinarySI' : p.suffix in DECIMAL_SUFFIX ? 'DecimalSI' : 'DecimalExponent'
  let scale = binary !== undefined ? 0 : (decimal ?? 0)
  let mantissa = 1n
  let precision: number
  if (binary !== undefined) {
    if (p.denom.length === 0) {
      mantissa = 1n << BigInt(binary)
      precision = 15 - p.num.length - Math.trunc((binary * 3) / 10) - 1
    } else precision = -1
  } else precision = MAX_INT64_DIGITS - (p.num.length + p.denom.length)
  if (precision >= 0) {
    scale -= p.denom.length
    if (scale >= -9) {
      const shifted = p.num + p.denom
      const value = BigInt(shifted)
      const result = value * mantissa
      if (value <= INT64_MAX && result <= INT64_MAX) {
        const signed = p.negative ? -result : result
        // Upstream keeps the text it parsed when that text is already in canonical form.
        const canonical =
          binary !== undefined
            ? binary % 10 === 0 && (value & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0')
        return tail(String(signed), scale, canonical ? text : '', format)
      }
    }
  }
  // Upstream holds such a value as an inf.Dec pointer, printed as its address.
  return `${big}${JSON.stringify(format)}}`
}

/** A quantity as the value of a field error (upstream passes the Quantity struct). */
export function goQuantity(raw: unknown): GoLiteral {
  return new GoLiteral(quantityStruct(rawText(raw)))
}

/** A core.ResourceList as the value of a field error: keys sorted, as fmt prints maps; nil when absent. */
export function goResourceList(list: unknown): GoLiteral {
  if (!isPlainObject(list)) return new GoLiteral('core.ResourceList(nil)')
  const entries = Object.keys(list)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${quantityStruct(rawText(list[k]))}`)
  return new GoLiteral(`core.ResourceList{${entries.join(', ')}}`)
}
