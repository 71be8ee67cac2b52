/**
 * Kubernetes' list library (apiserver/pkg/cel/library/lists.go):
 * `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)` and
 * `lastIndexOf(x)` on lists of comparable values (numbers, strings, bools,
 * bytes, timestamps, durations).
 */
import type { Environment } from '@marcbachmann/cel-js'

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** A scalar CEL value's ordering key, or undefined for values that have no order. */
function orderKey(value: unknown): bigint | number | string | undefined {
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof Date) return value.getTime()
  if (typeof value === 'object' && value !== null) {
    // Unsigned ints and durations are objects in the library; both expose a numeric value.
    const v = value as { value?: unknown; seconds?: unknown; nanos?: unknown }
    if (typeof v.value === 'bigint') return v.value
    if (typeof v.seconds === 'bigint') return v.seconds * 1_000_000_000n + BigInt(Number(v.nanos ?? 0))
  }
  return undefined
}

/** -1, 0 or 1; throws for values without an order, which upstream refuses when checking. */
export function compareValues(a: unknown, b: unknown): number {
  const x = orderKey(a)
  const y = orderKey(b)
  if (x === undefined || y === undefined) throw new Error('no such overload: values are not comparable')
  if (typeof x === 'string' || typeof y === 'string') {
    if (typeof x !== 'string' || typeof y !== 'string') throw new Error('no such overload: values are not comparable')
    // Go compares strings byte-wise in UTF-8, which orders code points: compare those, not UTF-16 units.
    const xs = [...x].map((c) => c.codePointAt(0) ?? 0)
    const ys = [...y].map((c) => c.codePointAt(0) ?? 0)
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) if (xs[i] !== ys[i]) return (xs[i] ?? 0) < (ys[i] ?? 0) ? -1 : 1
    return Math.sign(xs.length - ys.length)
  }
  return x < y ? -1 : x > y ? 1 : 0
}

function equalValues(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return a == b
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  const x = orderKey(a)
  return x !== undefined && typeof a === 'object' ? x === orderKey(b) : a === b
}

function extreme(list: readonly unknown[], name: 'min' | 'max'): unknown {
  if (list.length === 0) throw new Error(`${name} called on empty list`)
  const sign = name === 'min' ? -1 : 1
  return list.reduce((best, v) => (compareValues(v, best) === sign ? v : best))
}

function sumInts(list: readonly bigint[]): bigint {
  let total = 0n
  for (const v of list) {
    total += v
    if (total < INT64_MIN || total > INT64_MAX) throw new Error('integer overflow')
  }
  return total
}

/** `list.indexOf(x)`: the first index of an element equal to x, or -1. */
export function listIndexOf(list: readonly unknown[], x: unknown): bigint {
  return BigInt(list.findIndex((v) => equalValues(v, x)))
}

/** `list.lastIndexOf(x)`: the last index of an element equal to x, or -1. */
export function listLastIndexOf(list: readonly unknown[], x: unknown): bigint {
  for (let i = list.length - 1; i >= 0; i--) if (equalValues(list[i], x)) return BigInt(i)
  return -1n
}

export function registerLists(env: Environment): Environment {
  return env
    .registerFunction('list<T>.isSorted(): bool', (list: unknown[]) => list.every((v, i) => i === 0 || compareValues(list[i - 1], v) <= 0))
    .registerFunction('list<int>.sum(): int', (list: bigint[]) => sumInts(list))
    .registerFunction('list<double>.sum(): double', (list: number[]) => list.reduce((a, b) => a + b, 0))
    .registerFunction('list<T>.min(): T', (list: unknown[]) => extreme(list, 'min'))
    .registerFunction('list<T>.max(): T', (list: unknown[]) => extreme(list, 'max'))
    .registerFunction('list<T>.indexOf(T): int', listIndexOf)
    .registerFunction('list<T>.lastIndexOf(T): int', listLastIndexOf)
}
