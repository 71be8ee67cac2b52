/**
 * A webhook's `matchConditions` (upstream's webhook/matchconditions and
 * cel/filter): CEL over `object`, `oldObject`, `request` (the
 * AdmissionRequest), `namespaceObject` and `authorizer`, compiled when the
 * configuration is read and evaluated per request against one cost budget.
 *
 * As upstream decides: a condition that is false skips the webhook, even
 * when another failed; otherwise a failure (an evaluation error, a result
 * that is not a bool, the budget spent) follows the failure policy: Fail
 * refuses the request, Ignore skips the webhook.
 */
import type { ASTNode, Environment } from '@marcbachmann/cel-js'
import { parseAndCheck } from '../../cel/checked.js'
import { kubernetesEnvironment } from '../../cel/library/index.js'
import { CostMeter, isCostLimitExceeded, runMetered } from '../../cel/meter.js'
import { CALL_LIMIT_EXCEEDED, CEL_RULE_LIMITS } from '../../crd-schema/cel-cost.js'
import { ADMISSION_REQUEST_FIELDS } from '../../resources/admissionregistration/cel.js'
import { registerAuthorizerLibrary } from './cel-authorizer.js'
import { celErrorText } from '../../cel/errors.js'

/** The AdmissionRequest as CEL declares it; every field is present when evaluated. */
const REQUEST_FIELDS = ADMISSION_REQUEST_FIELDS

/** Upstream's RuntimeCELCostBudgetMatchConditions: what all conditions of one webhook may cost on one request. */
export const MATCH_CONDITIONS_COST_BUDGET = 7_000_000

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

let environment: Environment | undefined
function matchConditionEnvironment(): Environment {
  environment ??= registerAuthorizerLibrary(
    kubernetesEnvironment()
      .registerVariable('object', 'dyn')
      .registerVariable('oldObject', 'dyn')
      .registerVariable('namespaceObject', 'dyn')
      .registerVariable('request', { schema: REQUEST_FIELDS }),
  )
  return environment
}

export interface CompiledCondition {
  name: string
  expression: string
  /** The program, or why the expression does not compile (evaluated as a failure). */
  program: { ast: ASTNode; run: (activation: Record<string, unknown>, meter: CostMeter) => unknown } | { error: string }
}

export function compileMatchConditions(conditions: readonly { name?: string; expression?: string }[]): CompiledCondition[] {
  return conditions.map(({ name = '', expression = '' }) => {
    const outcome = parseAndCheck(matchConditionEnvironment(), expression)
    if ('issue' in outcome) return { name, expression, program: { error: `compilation failed: ${outcome.issue}` } }
    const parsed = outcome.parsed
    return { name, expression, program: { ast: parsed.ast, run: (activation, meter) => runMetered(parsed, activation, meter) } }
  })
}

/** What the conditions see: JSON values with integers as CEL ints, and how many values there are. */
export interface ConditionInput {
  activation: Record<string, unknown>
  size: number
}

/** A JSON value as CEL values: integral numbers become int64 (BigInt), as Kubernetes decodes them. */
function toCel(value: unknown, counter: { values: number }): unknown {
  counter.values++
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map((v) => toCel(v, counter))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v, counter)
    return out
  }
  return value
}

export function conditionInput(object: unknown, oldObject: unknown, request: Record<string, unknown>, authorizer: unknown): ConditionInput {
  const counter = { values: 0 }
  const activation = {
    object: object === undefined ? null : toCel(object, counter),
    oldObject: oldObject === undefined ? null : toCel(oldObject, counter),
    namespaceObject: null,
    request: { ...(toCel(request, counter) as Record<string, unknown>), options: request['options'] === undefined ? null : toCel(request['options'], { values: 0 }) },
    authorizer,
  }
  return { activation, size: counter.values }
}

export type MatchOutcome = { matches: true } | { matches: false; failedCondition?: string } | { error: string }

const errorText = celErrorText

/**
 * Evaluates every condition (upstream evaluates them all before deciding),
 * then decides in order: the first false skips the webhook; otherwise any
 * failure is the outcome's error, worded as upstream aggregates errors.
 */
export async function evaluateMatchConditions(conditions: readonly CompiledCondition[], input: ConditionInput): Promise<MatchOutcome> {
  let budget = MATCH_CONDITIONS_COST_BUDGET
  const results: ({ value: unknown } | { error: string })[] = []
  for (const condition of conditions) {
    const program = condition.program
    if ('error' in program) {
      results.push({ error: program.error })
      continue
    }
    // Each condition runs under a meter of the per-call limit; what it actually cost is drawn from the budget (upstream's filter.go).
    const meter = new CostMeter(CEL_RULE_LIMITS.perCallLimit)
    let result: { value: unknown } | { error: string }
    try {
      result = { value: await program.run(input.activation, meter) }
    } catch (err) {
      const detail = isCostLimitExceeded(err) ? CALL_LIMIT_EXCEEDED : errorText(err)
      result = { error: `expression '${condition.expression}' resulted in error: ${detail}` }
    }
    if (meter.cost > budget) return { error: OUT_OF_BUDGET }
    budget -= meter.cost
    results.push(result)
  }
  const errors: string[] = []
  for (const [i, result] of results.entries()) {
    if ('error' in result) errors.push(result.error)
    else if (result.value === false) return { matches: false, failedCondition: conditions[i]?.name ?? '' }
    else if (result.value !== true) errors.push(`expression '${conditions[i]?.expression ?? ''}' resulted in error: no such overload`)
  }
  if (errors.length === 1) return { error: errors[0] ?? '' }
  if (errors.length > 1) return { error: `[${errors.join(', ')}]` }
  return { matches: true }
}
