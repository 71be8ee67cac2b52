/**
 * A cost bound for validation rules. cel-go meters every step of an
 * evaluation and stops a call past its limit; @marcbachmann/cel-js has no
 * such meter, so the cost of a call is estimated before it runs, from the
 * rule's parsed tree and the size of its input: each node costs one, and
 * the body of a comprehension (`all`, `exists`, `map`, ...) costs once per
 * value of the input, so nested comprehensions grow as n², n³. A call whose
 * estimate passes the per-call limit is not run, and every call draws from
 * one budget per request, with upstream's limits and messages
 * (apiserver/pkg/apis/cel/config.go, schema/cel/validation.go).
 *
 * This is the second line of defence: a CRD whose rules could cost too
 * much on the largest objects it allows is refused when it is written
 * (cel-static-cost.ts).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { CEL_INPUT_LIMITS } from '../cel/evaluate.js'
import { childNodes } from '../cel/compile.js'

export const CEL_RULE_LIMITS = {
  /** The most one rule evaluation may cost (upstream's PerCallLimit). */
  perCallLimit: 1_000_000,
  /** What all the rules of one object may cost together (upstream's RuntimeCELCostBudget). */
  perRequestBudget: 10_000_000,
  /** Bounds on the value a rule sees (`self`, `oldSelf`), shared with the other CEL inputs. */
  maxInputValues: CEL_INPUT_LIMITS.maxValues,
  maxInputDepth: CEL_INPUT_LIMITS.maxDepth,
} as const

export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

/** The text cel-go's interrupted call carries, which upstream quotes. */
export const CALL_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded'

/** The budget of one request's rule evaluations. */
export interface CostBudget {
  remaining: number
}

export function newCostBudget(total: number = CEL_RULE_LIMITS.perRequestBudget): CostBudget {
  return { remaining: total }
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter'])


/** Whether the expression names the variable anywhere (a transition rule names `oldSelf`). */
export function referencesVariable(ast: ASTNode, name: string): boolean {
  const pending: ASTNode[] = [ast]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.op === 'id' && node.args === name) return true
    pending.push(...childNodes(node))
  }
  return false
}

/** Estimated cost of one evaluation when the input holds `size` values. */
export function estimateCost(ast: ASTNode, size: number): number {
  const n = Math.max(1, size)
  const cost = (node: ASTNode): number => {
    if (node.op === 'rcall' && COMPREHENSIONS.has(node.args[0]) && node.args[2].length >= 2) {
      const body = node.args[2].reduce((sum, arg) => sum + cost(arg), 0)
      return 1 + cost(node.args[1]) + n * body
    }
    return childNodes(node).reduce((sum, child) => sum + cost(child), 1)
  }
  return cost(ast)
}
