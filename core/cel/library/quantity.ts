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

const SUFFIX = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/
const BINARY: Record<string, bigint> = { Ki: 1n, Mi: 2n, Gi: 3n, Ti: 4n, Pi: 5n, Ei: 6n }
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }

/** The quantity `text` denotes, or undefined when upstream's parser refuses it. */
export function parseQuantity(text: string): Quantity | undefined {
  const m = SUFFIX.exec(text)
  if (!m) return undefined
  const [, sign = '', number = '', suffix = ''] = m
  const [whole = '', fraction = ''] = number.split('.')
  let numerator = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n)
  let scale = fraction.length
  if (suffix in BINARY) numerator *= 1024n ** (BINARY[suffix] ?? 0n)
  else if (suffix !== '') {
    const exponent = DECIMAL[suffix] ?? Number(suffix.slice(1))
    if (Math.abs(exponent) > 1000) return undefined
    if (exponent >= scale) {
      numerator *= 10n ** BigInt(exponent - scale)
      scale = 0
    } else scale -= exponent
  }
  return new Quantity(numerator, scale)
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
