/**
 * Resource lists (`{ "requests.cpu": "500m", pods: "3" }`) as quota and
 * limit ranges compute with them: exact amounts (whole nanos, as upstream
 * rounds every quantity it stores) with the format they print in, and
 * upstream's list helpers (Add, Subtract, Mask, LessThanOrEqual...) from
 * pkg/quota/v1/resources.go.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent'

export interface Amount {
  /** The value in units of 10^-9. */
  readonly nanos: bigint
  readonly format: Format
}

export type ResourceList = Record<string, Amount>

const NANOS_PER_UNIT = 1_000_000_000n
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][-+]?\d+)?$/
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 }
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']
const DECIMAL_SUFFIX = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]))

/** Rounds n / d up (away from zero), as upstream rounds a quantity finer than a nano. */
function divideUp(n: bigint, d: bigint): bigint {
  const q = n / d
  return n % d === 0n ? q : n < 0n ? q - 1n : q + 1n
}

/** The amount a quantity (text or number) stands for; undefined when it is not one. */
export function parseAmount(raw: unknown): Amount | undefined {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined
  if (text === undefined) return undefined
  const m = QUANTITY.exec(text)
  if (!m || (!m[2] && !m[3])) return undefined
  const [, sign = '', whole = '', fraction = '', suffix = ''] = m
  let numerator = BigInt(`${whole || '0'}${fraction}`) * NANOS_PER_UNIT
  let denominator = 10n ** BigInt(fraction.length)
  let format: Format = 'DecimalSI'
  if (suffix in BINARY) {
    numerator *= 1024n ** BigInt(BINARY[suffix] ?? 0)
    format = 'BinarySI'
  } else if (suffix) {
    const exponent = DECIMAL[suffix] ?? Number(suffix.slice(1))
    if (!(suffix in DECIMAL)) format = 'DecimalExponent'
    if (Math.abs(exponent) > 100) return undefined
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent)
    else denominator *= 10n ** BigInt(-exponent)
  }
  const nanos = divideUp(numerator, denominator)
  return { nanos: sign === '-' ? -nanos : nanos, format }
}

export const amountOf = (n: number | bigint, format: Format = 'DecimalSI'): Amount => ({ nanos: BigInt(n) * NANOS_PER_UNIT, format })

/** The text upstream's Quantity.String prints for the amount. */
export function formatAmount(a: Amount): string {
  if (a.nanos === 0n) return '0'
  const sign = a.nanos < 0n ? '-' : ''
  const abs = a.nanos < 0n ? -a.nanos : a.nanos
  const whole = abs % NANOS_PER_UNIT === 0n ? abs / NANOS_PER_UNIT : undefined
  // Binary only for whole amounts of at least 1024; anything else shows in decimal, as upstream's canonical form.
  if (a.format === 'BinarySI' && whole !== undefined && whole >= 1024n) {
    let amount = whole
    let power = 0
    while (power < 6 && amount % 1024n === 0n) {
      amount /= 1024n
      power++
    }
    return `${sign}${amount}${BINARY_SUFFIX[power] ?? ''}`
  }
  let mantissa = abs
  let exponent = -9
  while (mantissa % 10n === 0n) {
    mantissa /= 10n
    exponent++
  }
  const extra = ((exponent % 3) + 3) % 3
  mantissa *= 10n ** BigInt(extra)
  exponent -= extra
  if (a.format === 'DecimalExponent') return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`
  while (exponent > 18) {
    mantissa *= 1000n
    exponent -= 3
  }
  return `${sign}${mantissa}${DECIMAL_SUFFIX.get(exponent) ?? ''}`
}

/** A stored resource list (quantities as text); entries that are no quantity are left out. */
export function parseResourceList(raw: unknown): ResourceList {
  const out: ResourceList = {}
  if (!isPlainObject(raw)) return out
  for (const [name, value] of Object.entries(raw)) {
    const amount = parseAmount(value)
    if (amount) out[name] = amount
  }
  return out
}

export function formatResourceList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(Object.entries(list).map(([name, a]) => [name, formatAmount(a)]))
}

/** upstream's Quantity.Add: the sum keeps the first operand's format, unless that one is zero. */
export function addAmounts(a: Amount, b: Amount): Amount {
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format }
}

export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a }
  for (const [name, amount] of Object.entries(b)) {
    const mine = out[name]
    out[name] = mine ? addAmounts(mine, amount) : amount
  }
  return out
}

/** a - b for every name of a, never below zero (upstream's SubtractWithNonNegativeResult). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {}
  for (const [name, amount] of Object.entries(a)) {
    const other = b[name]
    const nanos = other ? amount.nanos - other.nanos : amount.nanos
    out[name] = { nanos: nanos < 0n ? 0n : nanos, format: amount.format }
  }
  return out
}

/** a - b; names only in b come out negative. */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a }
  for (const [name, amount] of Object.entries(b)) {
    const mine = out[name]
    out[name] = { nanos: (mine?.nanos ?? 0n) - amount.nanos, format: mine?.format ?? amount.format }
  }
  return out
}

/** The entries of `list` whose names are in `names`. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {}
  for (const name of names) {
    const amount = list[name]
    if (amount) out[name] = amount
  }
  return out
}

export function removeZeros(list: ResourceList): ResourceList {
  return Object.fromEntries(Object.entries(list).filter(([, a]) => a.nanos !== 0n))
}

export function negativeNames(list: ResourceList): string[] {
  return Object.keys(list).filter((name) => (list[name]?.nanos ?? 0n) < 0n)
}

/** Which names of `a` exceed the same name in `b` (names b lacks are not limited). */
export function exceeding(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(a)
    .filter((name) => {
      const limit = b[name]
      return limit !== undefined && (a[name]?.nanos ?? 0n) > limit.nanos
    })
    .sort()
}

export function equalLists(a: ResourceList, b: ResourceList): boolean {
  const names = Object.keys(a)
  return names.length === Object.keys(b).length && names.every((n) => b[n] !== undefined && b[n].nanos === a[n]?.nanos)
}

/** `name=value` sorted by name, comma-separated: how upstream's quota messages print a list. */
export function prettyPrint(list: ResourceList): string {
  return Object.keys(list)
    .sort()
    .map((name) => `${name}=${formatAmount(list[name] as Amount)}`)
    .join(',')
}

export const prettyPrintNames = (names: Iterable<string>): string => [...new Set(names)].sort().join(',')

const statusOf = (quota: KubeObject): Record<string, unknown> => (isPlainObject(quota['status']) ? quota['status'] : {})
/** A ResourceQuota's `status.hard`, as the controller last wrote it. */
export const hardOf = (quota: KubeObject): ResourceList => parseResourceList(statusOf(quota)['hard'])
/** A ResourceQuota's `status.used`. */
export const usedOf = (quota: KubeObject): ResourceList => parseResourceList(statusOf(quota)['used'])

/** The quota with `used` as its `status.used`. */
export function withUsed(quota: KubeObject, used: ResourceList): KubeObject {
  return { ...quota, status: { ...statusOf(quota), used: formatResourceList(used) } }
}
