/**
 * Kubernetes' quantity library (apiserver/pkg/cel/library/quantity.go, in
 * the environment from 1.28): `quantity(s)`, `isQuantity(s)` and the
 * arithmetic and comparisons of resource quantities, computed exactly
 * (a quantity is held as a fraction whose denominator is a power of ten).
 */
import type { Environment } from '@marcbachmann/cel-js'

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

export class Quantity {
  /** The value is numerator / 10^scale. */
  constructor(
    readonly numerator: bigint,
    readonly scale: number,
  ) {}

  /** Both values over one denominator, for comparing and adding. */
  static align(a: Quantity, b: Quantity): [bigint, bigint, number] {
    const scale = Math.max(a.scale, b.scale)
    return [a.numerator * 10n ** BigInt(scale - a.scale), b.numerator * 10n ** BigInt(scale - b.scale), scale]
  }

  compare(other: Quantity): number {
    const [x, y] = Quantity.align(this, other)
    return x < y ? -1 : x > y ? 1 : 0
  }

  isInteger(): boolean {
    return this.numerator % 10n ** BigInt(this.scale) === 0n
  }
}

// `\d+(?:\.\d*)?` rather than `\d+\.?\d*`, which splits a run of digits every way before it fails (quadratic in its length).
const SUFFIX = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/
/** The power of two each binary suffix stands for. */
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }

/** Upstream keeps no digit finer than a nano (resource.Nano): a finer non-zero amount is rounded up to it. */
const NANO_SCALE = 9

/** The quantity `text` denotes, or undefined when upstream's parser refuses it. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = SUFFIX.exec(text)
  if (!m) return undefined
  const [, sign = '', number = '', suffix = ''] = m
  const [whole = '', fraction = ''] = number.split('.')
  let digits = `${whole}${fraction}`
  let scale = fraction.length
  let bits = 0
  if (suffix in BINARY) bits = BINARY[suffix] ?? 0
  else if (suffix !== '') {
    const exponent = DECIMAL[suffix] ?? Number(suffix.slice(1))
    if (Math.abs(exponent) > 1000) return undefined
    if (exponent >= scale) {
      digits += '0'.repeat(exponent - scale)
      scale = 0
    } else scale -= exponent
  }
  const magnitude = roundUpToNano(digits, scale, bits)
  return new Quantity(sign === '-' ? -magnitude.numerator : magnitude.numerator, magnitude.scale)
}

/**
 * `digits` / 10^`scale` × 2^`bits` (a binary suffix), rounded up — away
 * from zero, as upstream rounds the magnitude — to whole nanos. Digits
 * past those that can still matter are not converted at all, only looked
 * at for a non-zero one, so a fraction a million digits long costs one
 * scan instead of big-number arithmetic on it ever after.
 */
function roundUpToNano(digits: string, scale: number, bits: number): Quantity {
  // 2^bits divides 10^bits: with `bits` digits kept past the nano, no nano
  // lies strictly between the kept digits' value and the next step up of
  // them, once multiplied, so any non-zero remainder only needs to count as one.
  const factor = 1n << BigInt(bits)
  const kept = NANO_SCALE + bits
  let numerator: bigint
  if (scale > kept) {
    const cut = digits.length - (scale - kept)
    numerator = BigInt(digits.slice(0, Math.max(cut, 0)) || '0') * factor
    if (/[1-9]/.test(digits.slice(Math.max(cut, 0)))) numerator += 1n
    scale = kept
  } else numerator = BigInt(digits || '0') * factor
  if (scale <= NANO_SCALE) return new Quantity(numerator, scale)
  const divisor = 10n ** BigInt(scale - NANO_SCALE)
  const rounded = numerator / divisor + (numerator % divisor === 0n ? 0n : 1n)
  return new Quantity(rounded, NANO_SCALE)
}

function quantity(text: string): Quantity {
  const q = parseQuantity(text)
  if (!q) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'')
  return q
}

function add(a: Quantity, b: Quantity, sign: 1n | -1n): Quantity {
  const [x, y, scale] = Quantity.align(a, b)
  return new Quantity(x + sign * y, scale)
}

function asInteger(q: Quantity): bigint {
  if (!q.isInteger()) throw new Error('cannot convert value to integer')
  const n = q.numerator / 10n ** BigInt(q.scale)
  if (n < INT64_MIN || n > INT64_MAX) throw new Error('cannot convert value to integer')
  return n
}

export function registerQuantity(env: Environment): Environment {
  return env
    .registerType('kubernetes.Quantity', Quantity)
    .registerFunction('quantity(string): kubernetes.Quantity', quantity)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction('kubernetes.Quantity.isInteger(): bool', (q: Quantity) => q.isInteger())
    .registerFunction('kubernetes.Quantity.asInteger(): int', asInteger)
    .registerFunction('kubernetes.Quantity.asApproximateFloat(): double', (q: Quantity) => Number(q.numerator) / 10 ** q.scale)
    .registerFunction('kubernetes.Quantity.sign(): int', (q: Quantity) => BigInt(q.compare(new Quantity(0n, 0))))
    .registerFunction('kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity', (a: Quantity, b: Quantity) => add(a, b, 1n))
    .registerFunction('kubernetes.Quantity.add(int): kubernetes.Quantity', (a: Quantity, b: bigint) => add(a, new Quantity(b, 0), 1n))
    .registerFunction('kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity', (a: Quantity, b: Quantity) => add(a, b, -1n))
    .registerFunction('kubernetes.Quantity.sub(int): kubernetes.Quantity', (a: Quantity, b: bigint) => add(a, new Quantity(b, 0), -1n))
    .registerFunction('kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool', (a: Quantity, b: Quantity) => a.compare(b) > 0)
    .registerFunction('kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool', (a: Quantity, b: Quantity) => a.compare(b) < 0)
    .registerFunction('kubernetes.Quantity.compareTo(kubernetes.Quantity): int', (a: Quantity, b: Quantity) => BigInt(a.compare(b)))
    .registerOperator('kubernetes.Quantity == kubernetes.Quantity', (a: Quantity, b: Quantity) => a.compare(b) === 0)
}
