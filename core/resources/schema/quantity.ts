/**
 * The text upstream writes back for a resource.Quantity: every quantity a
 * client sends is parsed and re-printed in canonical form (`1000m` → `1`,
 * `0.5` → `500m`, `2048Ki` → `2Mi`), except that a text upstream's parser
 * already deems canonical is kept as it came (`1.500`, `+1`).
 *
 * Values are kept as an exact decimal (a BigInt and a power of ten) so that
 * no quantity loses precision and a huge exponent costs nothing.
 */

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent'

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]))
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]))

/** Upstream keeps the int64 fast path for up to 18 significant digits. */
const MAX_INT64_FACTORS = 18
const INT64_MAX = 2n ** 63n - 1n
const NANO = -9

interface Parts {
  negative: boolean
  /** Integer digits, leading zeros removed ('0' when none are left). */
  whole: string
  /** Fraction digits, as written. */
  fraction: string
  format: Format
  /** Power of ten (decimal formats) or of two (BinarySI) the suffix stands for. */
  exponent: number
}

function splitQuantity(text: string): Parts | undefined {
  // `s`: the suffix takes any rest, line breaks too; without it a line break after a long run of digits backtracks through every split of them.
  const m = /^([+-]?)0*(\d*)(?:\.(\d*))?(.*)$/s.exec(text)
  if (!m) return undefined
  const [, sign = '', whole = '', fraction = '', suffix = ''] = m
  const parts = { negative: sign === '-', whole: whole || '0', fraction }
  if (suffix in DECIMAL_SUFFIXES) return { ...parts, format: 'DecimalSI', exponent: DECIMAL_SUFFIXES[suffix] ?? 0 }
  if (suffix in BINARY_SUFFIXES) return { ...parts, format: 'BinarySI', exponent: BINARY_SUFFIXES[suffix] ?? 0 }
  const exp = /^[eE]([-+]?\d+)$/.exec(suffix)
  if (exp) return { ...parts, format: 'DecimalExponent', exponent: Number(exp[1]) }
  return undefined
}

/** Whether upstream's parser keeps the text as written: it already reads as the canonical form would. */
function keptAsWritten(p: Parts): boolean {
  const shifted = p.whole + p.fraction
  if (p.format === 'BinarySI') {
    if (p.fraction) return false
    const precision = 15 - p.whole.length - Math.trunc((p.exponent * 3) / 10) - 1
    const value = BigInt(p.whole)
    return precision >= 0 && value << BigInt(p.exponent) <= INT64_MAX && (value & 7n) !== 0n
  }
  if (MAX_INT64_FACTORS - shifted.length < 0) return false
  const scale = p.exponent - p.fraction.length
  return scale >= NANO && BigInt(shifted) <= INT64_MAX && scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0')
}

/**
 * The fraction's digits that can change the quantity once it is rounded up
 * to a nano: the first 9 + its decimal exponent, or 9 + the bits of a
 * binary suffix (2^bits divides 10^bits, so no nano falls between two
 * values that differ only past them), then one non-zero digit standing for
 * any that follow. A fraction a million digits long would otherwise become
 * a number of a million digits (some 0.7 s of the serving thread).
 */
function significantFraction(p: Parts): string {
  const keep = Math.max(0, p.exponent - NANO)
  if (p.fraction.length <= keep + 1) return p.fraction
  return p.fraction.slice(0, keep) + (/[1-9]/.test(p.fraction.slice(keep)) ? '1' : '')
}

/*
 * The arithmetic works on the decimal text of the digits, not on a BigInt:
 * a quantity may have a million digits, and upstream keeps them all. Each
 * step here is one pass over the text; dividing a BigInt by ten once per
 * trailing zero had cost the number's length each time (minutes of the
 * serving thread for `1` and a million zeros), and every conversion
 * between a BigInt and its text some 0.1–0.3 s at that length.
 */

/** `digits` (no leading zeros, not zero) × 10^`exponent`, with its trailing zeros moved into the exponent. */
function normalise(digits: string, exponent: number): [string, number] {
  let end = digits.length
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--
  return [digits.slice(0, end), exponent + digits.length - end]
}

/** `digits` + 1. */
function increment(digits: string): string {
  let i = digits.length - 1
  while (i >= 0 && digits[i] === '9') i--
  if (i < 0) return `1${'0'.repeat(digits.length)}`
  return `${digits.slice(0, i)}${Number(digits[i]) + 1}${'0'.repeat(digits.length - i - 1)}`
}

/** Rounds a positive `digits` × 10^`exponent` up (away from zero) to whole nanos, as upstream does to tiny requests. */
function roundUpToNano(digits: string, exponent: number): [string, number] {
  if (exponent >= NANO) return [digits, exponent]
  const drop = NANO - exponent
  if (drop >= digits.length) return ['1', NANO]
  const kept = digits.slice(0, digits.length - drop)
  return [/[1-9]/.test(digits.slice(kept.length)) ? increment(kept) : kept, NANO]
}

function decimalText(sign: string, digits: string, exponent: number, format: Format): string {
  let [amount, exp] = normalise(digits, exponent)
  const extra = ((exp % 3) + 3) % 3
  amount += '0'.repeat(extra)
  exp -= extra
  if (format === 'DecimalExponent') return `${sign}${amount}${exp === 0 ? '' : `e${exp}`}`
  const suffix = DECIMAL_BY_EXPONENT.get(exp)
  return `${sign}${amount}${suffix ?? `e${exp}`}`
}

/** A binary quantity (`1.5Gi`, `3Ki`) in upstream's canonical text. */
function binaryText(p: Parts): string {
  const sign = p.negative ? '-' : ''
  // Upstream caps binary quantities at the largest int64, which has 19 digits: a longer whole part is past it.
  if (p.whole.length > 19) return `${sign}${INT64_MAX}`
  // Multiply out the power of two; the decimal exponent stays that of the fraction.
  let [digits, exponent] = normalise((BigInt(p.whole + p.fraction) << BigInt(p.exponent)).toString(), -p.fraction.length)
  ;[digits, exponent] = roundUpToNano(digits, exponent)
  const value = BigInt(digits)
  const scale = 10n ** BigInt(Math.abs(exponent))
  if (exponent < 0 ? value > INT64_MAX * scale : value * scale > INT64_MAX) return `${sign}${INT64_MAX}`
  // A binary quantity with a fraction left cannot be shown in Ki/Mi/...: upstream shows it in decimal.
  if (exponent < 0) return decimalText(sign, digits, exponent, 'DecimalSI')
  const whole = value * scale
  if (whole < 1024n) return decimalText(sign, whole.toString(), 0, 'DecimalSI')
  let amount = whole
  let power = 0
  while (amount % 1024n === 0n && power < 60) {
    amount /= 1024n
    power += 10
  }
  return `${sign}${amount}${BINARY_BY_EXPONENT.get(power) ?? ''}`
}

/**
 * The canonical texts of the quantities met lately: objects repeat a handful
 * (`500m`, `128Mi`), and each write of a Pod reads its quantities several
 * times (decoding, defaults, validation). Short texts only, and a bounded
 * number of them: a client that sends many different ones empties it.
 */
const canonicalTexts = new Map<string, string | undefined>()
const KEPT_TEXTS = 1024
const KEPT_TEXT_LENGTH = 64

/**
 * The canonical text of a quantity already known to be well-formed (see
 * go-values.ts parseQuantity); undefined when it is not one.
 */
export function canonicalQuantity(text: string): string | undefined {
  if (text.length > KEPT_TEXT_LENGTH) return canonicalText(text)
  const kept = canonicalTexts.get(text)
  if (kept !== undefined || canonicalTexts.has(text)) return kept
  if (canonicalTexts.size >= KEPT_TEXTS) canonicalTexts.clear()
  const canonical = canonicalText(text)
  canonicalTexts.set(text, canonical)
  return canonical
}

function canonicalText(text: string): string | undefined {
  if (text === '0') return text
  const split = splitQuantity(text)
  if (!split) return undefined
  const p = { ...split, fraction: significantFraction(split) }
  if (keptAsWritten(p)) return text
  const digits = (p.whole + p.fraction).replace(/^0+/, '')
  if (digits === '') return '0'
  if (p.format === 'BinarySI') return binaryText(p)
  return decimalText(p.negative ? '-' : '', ...roundUpToNano(digits, p.exponent - p.fraction.length), p.format)
}
