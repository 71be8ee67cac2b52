/**
 * The cost limits a CRD's rules are held to when the CRD is written
 * (apiextensions validation.go and cel_validation.go): each rule's
 * estimated cost, times the number of times it may run (the product of the
 * `maxItems`/`maxProperties` above it, or what fits in one request), must
 * stay within the per-expression limit, and all the rules of one schema
 * within the per-CRD limit. The estimate is cel/cost's; the messages and
 * field paths are upstream's. The run-time budget (cel-cost.ts) stays as
 * the second line of defence.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { estimateExpressionCost } from '../cel/cost/estimate.js'
import { addSaturating, multiplySaturating } from '../cel/cost/range.js'
import { type FieldError, type FieldPath, forbiddenField } from '../machinery/field.js'
import type { CelSchemaProps } from './cel-schema.js'
import { type SizeNode, maxCardinality, sizeAt } from './cel-sizes.js'

export const STATIC_COST_LIMITS = {
  /** The most one rule (or messageExpression) may cost by estimate (upstream's StaticEstimatedCostLimit). */
  perExpression: 10_000_000,
  /** The most all the rules of one schema may cost together (StaticEstimatedCRDCostLimit). */
  perCRD: 100_000_000,
} as const

/** How many times the rules of a node may run; undefined when something above it is unbounded. */
export type Cardinality = number | undefined

/**
 * The cardinality of a child of `parent`: a list multiplies it by
 * `maxItems`, a map by `maxProperties`, an object's fields keep it.
 */
export function childCardinality(parentCardinality: Cardinality, parent: CelSchemaProps): Cardinality {
  if (parentCardinality === undefined) return undefined
  let factor: number | undefined = 1
  if (parent.type === 'array') factor = parent.maxItems
  else if (parent.type === 'object' && parent.additionalProperties !== undefined) factor = parent.maxProperties
  return factor === undefined ? undefined : multiplySaturating(parentCardinality, Math.max(0, factor))
}

/** The worst-case cost of one evaluation of an expression on the node `root` sizes. */
export function expressionMaxCost(ast: ASTNode, root: SizeNode): number {
  return estimateExpressionCost(ast, ({ path }) => (path && path.length > 0 ? sizeAt(root, path) : undefined)).max
}

/** A rule's cost over all the times it may run. */
export function ruleCost(maxCost: number, cardinality: Cardinality, node: SizeNode): number {
  return multiplySaturating(maxCost, cardinality ?? maxCardinality(node.minSerializedSize))
}

/** Go's `%.Nf`: the nearest decimal, and on an exact tie the even one (JavaScript's toFixed rounds ties up). */
function goFixed(x: number, digits: number): string {
  // For the factors shown (1 to 100), a double's binary fraction fits in 60 decimals: this expansion is exact.
  const exact = x.toFixed(60)
  const kept = exact.indexOf('.') + 1 + digits
  if (!/^50*$/.test(exact.slice(kept))) return x.toFixed(digits)
  const truncated = exact.slice(0, kept)
  return Number(truncated.at(-1)) % 2 === 0 ? truncated : x.toFixed(digits)
}

/** Upstream's getCostErrorMessage. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${goFixed(factor, 6)}x` : `${goFixed(factor, 1)}x`
  return (
    `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, ` +
    'and maxLength where arrays, maps, and strings are declared)'
  )
}

/** The cost limit for one expression: Forbidden at its path when over, and its share of the total. */
export function checkExpressionCost(
  total: TotalCost,
  path: FieldPath,
  cost: number,
  what: 'estimated rule cost' | 'estimated messageExpression cost',
  checkLimit: boolean,
): FieldError[] {
  total.observe(path, cost)
  if (!checkLimit || cost <= STATIC_COST_LIMITS.perExpression) return []
  return [forbiddenField(path, costErrorMessage(what, cost, STATIC_COST_LIMITS.perExpression))]
}

/** The sum of a schema's rule costs, and the few that weigh most in it (upstream's TotalCost). */
export class TotalCost {
  total = 0
  private readonly mostExpensive: { path: FieldPath; cost: number }[] = []

  observe(path: FieldPath, cost: number): void {
    this.total = addSaturating(this.total, cost)
    // Rules under 1% of the limit are not worth naming.
    if (cost < STATIC_COST_LIMITS.perCRD / 100) return
    this.mostExpensive.push({ path, cost })
    this.mostExpensive.sort((a, b) => b.cost - a.cost)
    this.mostExpensive.splice(4)
  }

  /** When the total is over the limit: each of the four costliest rules, then the schema at `schemaPath`. */
  errors(schemaPath: FieldPath): FieldError[] {
    if (this.total <= STATIC_COST_LIMITS.perCRD) return []
    const named = this.mostExpensive.map(({ path }) =>
      forbiddenField(path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'),
    )
    const what = 'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema'
    return [...named, forbiddenField(schemaPath, costErrorMessage(what, this.total, STATIC_COST_LIMITS.perCRD))]
  }
}
