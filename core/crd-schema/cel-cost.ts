/**
 * The cost limits of validation rules, with upstream's values and messages
 * (apiserver/pkg/apis/cel/config.go, apiextensions-apiserver
 * schema/cel/validation.go). Each rule evaluation runs under a meter of the
 * per-call limit (cel/meter.ts), which cancels it while it runs once its
 * actual cost passes the limit; what each evaluation actually cost is drawn
 * from one budget per request.
 *
 * A CRD whose rules could cost too much on the largest objects it allows is
 * refused when it is written (cel-static-cost.ts); the meter is what holds
 * when an estimate cannot see the work (`cel.bind`, growing strings).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { CEL_INPUT_LIMITS } from '../cel/evaluate.js'
import { childNodes } from '../cel/compile.js'
import { ACTUAL_COST_EXCEEDED, PER_CALL_LIMIT } from '../cel/meter.js'
import { appendAll } from '../machinery/append-all.js'

export const CEL_RULE_LIMITS = {
  /** The most one rule evaluation may cost (upstream's PerCallLimit). */
  perCallLimit: PER_CALL_LIMIT,
  /** What all the rules of one object may cost together (upstream's RuntimeCELCostBudget). */
  perRequestBudget: 10_000_000,
  /**
   * Values converted to CEL values for all the rules of one object
   * together (converting happens before a rule runs, where no meter
   * counts). Each node with rules converts its own subtree (its rules see
   * types of their own), so rules on every level of a deep object, or on
   * every item of a long list, convert the same values once per level:
   * without a bound across them, 30 million for a 2 MB object, seconds of
   * the one thread. An object that can be stored (1.5 MiB) has fewer
   * values than this, so any one node's rules read what upstream's read.
   */
  maxInputValues: 1_000_000,
  maxInputDepth: CEL_INPUT_LIMITS.maxDepth,
} as const

export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

/** The text cel-go's interrupted call carries, which upstream quotes. */
export const CALL_LIMIT_EXCEEDED = ACTUAL_COST_EXCEEDED

/** The budget of one request's rule evaluations. */
export interface CostBudget {
  remaining: number
  /** Values that may still be converted for rules to read (CEL_RULE_LIMITS.maxInputValues). */
  valuesLeft: number
}

export function newCostBudget(total: number = CEL_RULE_LIMITS.perRequestBudget): CostBudget {
  return { remaining: total, valuesLeft: CEL_RULE_LIMITS.maxInputValues }
}

/** Whether the expression names the variable anywhere (a transition rule names `oldSelf`). */
export function referencesVariable(ast: ASTNode, name: string): boolean {
  const pending: ASTNode[] = [ast]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.op === 'id' && node.args === name) return true
    appendAll(pending, childNodes(node))
  }
  return false
}
