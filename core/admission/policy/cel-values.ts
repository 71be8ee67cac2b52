/**
 * JSON values in and out of CEL. In: whole numbers become CEL `int`
 * (BigInt), as Kubernetes decodes integral JSON numbers to int64, and the
 * input is bounded: converting it happens before any expression runs, where
 * the cost meter (cel/meter.ts) does not count. Out: what
 * an expression built (an apply configuration, patch operations, a message)
 * back to plain JSON.
 */
import { Optional } from '@marcbachmann/cel-js'
import { base64Encode } from '../../machinery/base64.js'

/** Bounds on what one evaluation reads: an object past them is an evaluation error, as upstream's cost limit would be. */
export const POLICY_INPUT_LIMITS = { maxValues: 200_000, maxDepth: 64 } as const

export class PolicyInputTooLarge extends Error {}

export interface ValueBudget {
  valuesLeft: number
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** `value` as CEL sees it; charges each value to `budget`. */
export function toCel(value: unknown, budget: ValueBudget, depth = 0): unknown {
  if (--budget.valuesLeft < 0) throw new PolicyInputTooLarge(`more than ${POLICY_INPUT_LIMITS.maxValues} values`)
  if (depth > POLICY_INPUT_LIMITS.maxDepth) throw new PolicyInputTooLarge(`nested deeper than ${POLICY_INPUT_LIMITS.maxDepth} levels`)
  if (typeof value === 'number' && Number.isInteger(value)) {
    const n = BigInt(value)
    return n >= INT64_MIN && n <= INT64_MAX ? n : value
  }
  if (Array.isArray(value)) return value.map((v) => toCel(v, budget, depth + 1))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v, budget, depth + 1)
    return out
  }
  return value
}

/** A CEL result as JSON: ints as numbers, maps as objects, timestamps and durations as their text. */
export function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  // The library's uint and duration values.
  if (value !== null && typeof value === 'object' && value.constructor.name === 'UnsignedInt') return Number((value as { valueOf(): bigint }).valueOf())
  if (value !== null && typeof value === 'object' && value.constructor.name === 'Duration') return String(value)
  if (value instanceof Optional) return value.hasValue() ? fromCel(value.value()) : null
  if (value instanceof Date) return value.toISOString().replace(/\.000Z$/, 'Z')
  if (value instanceof Uint8Array) return base64Encode(value)
  if (Array.isArray(value)) return value.map(fromCel)
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), fromCel(v)]))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = fromCel(v)
    return out
  }
  return value
}
