/**
 * The arithmetic of cel-go's static cost estimates (checker/cost.go): a
 * cost or a size is a range [min, max] of unsigned 64-bit integers whose
 * sums and products saturate at 2^64-1 instead of wrapping, and whose
 * fractional factors round up. Numbers past 2^53 lose precision here, which
 * only matters far beyond any limit they are compared with.
 */

/** 2^64-1 as a double, which is 2^64 (as Go's float64(math.MaxUint64) is). */
export const U64_MAX = 2 ** 64

/** A cost (cel-go's CostEstimate) or a size (SizeEstimate): both are [min, max]. */
export interface Range {
  readonly min: number
  readonly max: number
}

/** cel-go's cost units: an identifier or a field read costs 1, a constant 0, creating a list 10, a map 30, a message 40. */
export const COST_UNITS = {
  selectAndIdent: 1,
  constant: 0,
  listCreate: 10,
  mapCreate: 30,
  structCreate: 40,
  /** Traversing one character of a string. */
  stringTraversal: 0.1,
  /** Applying one character of a regular expression to one character of input. */
  regexStringLength: 0.25,
} as const

export const range = (min: number, max: number = min): Range => ({ min, max })

export const ZERO: Range = range(0)
export const ONE: Range = range(1)
/** What nothing is known about: any size a request can hold, and more. */
export const UNBOUNDED: Range = range(0, U64_MAX)

const addSat = (a: number, b: number): number => Math.min(a + b, U64_MAX)

function mulSat(a: number, b: number): number {
  if (a === 0 || b === 0) return 0
  return Math.min(a * b, U64_MAX)
}

function factorSat(x: number, factor: number): number {
  if (x > 0 && factor > 0 && x > U64_MAX / factor) return U64_MAX
  return Math.min(Math.ceil(x * factor), U64_MAX)
}

export const add = (a: Range, b: Range): Range => range(addSat(a.min, b.min), addSat(a.max, b.max))

export const sum = (ranges: readonly Range[]): Range => ranges.reduce(add, ZERO)

export const multiply = (a: Range, b: Range): Range => range(mulSat(a.min, b.min), mulSat(a.max, b.max))

/** The range times a fractional cost per unit, each bound rounded up (MultiplyByCostFactor). */
export const byFactor = (a: Range, factor: number): Range => range(factorSat(a.min, factor), factorSat(a.max, factor))

/** The range that covers both. */
export const union = (a: Range, b: Range): Range => range(Math.min(a.min, b.min), Math.max(a.max, b.max))

/** cel-go's saturating product of two single numbers (a rule's cost times how often it may run). */
export const multiplySaturating = mulSat

/** cel-go's saturating sum of two single numbers. */
export const addSaturating = addSat
