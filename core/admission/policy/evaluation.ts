/**
 * Evaluating a policy's expressions for one request and one parameter
 * object, as upstream's CEL filter does: each expression sees `object`,
 * `oldObject`, `request`, `params`, `namespaceObject`, `authorizer` and the
 * policy's `variables`, which are evaluated lazily, once, when an
 * expression first names them (an unused variable that fails costs nothing).
 *
 * Cost: each evaluation runs under a meter of upstream's per-call limit
 * (cel/meter.ts), which cancels it while it runs; a variable evaluated for
 * an expression is charged to that expression's meter, as upstream's lazy
 * variables are part of the evaluation that first reads them, and counts
 * once. What each evaluation actually cost is drawn from the policy
 * evaluation's budget, upstream's RuntimeCELCostBudget.
 *
 * Time: upstream gives every parameter object of a binding a budget of its
 * own, so a request a binding matches with a hundred parameters may compute
 * for seconds; upstream does that in the request's goroutine, but here the
 * thread is every client's, so each expression starts by letting the other
 * requests run once the thread's time slice is spent (machinery/time-slice.ts).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { childNodes, parseAndCheck } from '../../cel/checked.js'
import { deepCount } from '../../cel/meter-calls.js'
import { CostMeter, isCostLimitExceeded, runMetered } from '../../cel/meter.js'
import { CALL_LIMIT_EXCEEDED, CEL_RULE_LIMITS } from '../../crd-schema/cel-cost.js'
import { TimeSlice } from '../../machinery/time-slice.js'
import { policyEnvironment } from './cel-environment.js'
import { messagesAsMaps } from './object-literals.js'
import { appendAll } from '../../machinery/append-all.js'
import { celErrorText } from '../../cel/errors.js'

/** Upstream's ErrOutOfBudget wording. */
export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

export interface CompiledExpression {
  readonly expression: string
  /** The checked result type (`bool`, `string`, `dyn`, ...). */
  readonly type: string
  readonly ast: ASTNode
  /** The policy variables it names (`variables.x`). */
  readonly variables: readonly string[]
  /** Runs the program charging `meter`; throws the library's errors, or the meter's once it passes its limit. */
  run(activation: Record<string, unknown>, meter: CostMeter): unknown
}

export type Compiled = { compiled: CompiledExpression } | { error: string }

function namedVariables(ast: ASTNode): string[] {
  const names = new Set<string>()
  const pending: ASTNode[] = [ast]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if ((node.op === '.' || node.op === '.?') && typeof node.args[1] === 'string') {
      const operand = node.args[0]
      if (operand.op === 'id' && operand.args === 'variables') names.add(node.args[1])
    }
    appendAll(pending, childNodes(node))
  }
  return [...names]
}

const cache = new Map<string, Compiled>()
const CACHE_LIMIT = 2000

/** Parses and checks `expression` in the policy environment; kept while the same text is in use. */
export function compilePolicyExpression(expression: string): Compiled {
  let compiled = cache.get(expression)
  if (compiled) return compiled
  const outcome = parseAndCheck(policyEnvironment(), messagesAsMaps(expression))
  if ('issue' in outcome) compiled = { error: `compilation failed: ${outcome.issue}` }
  else {
    const { parsed, type } = outcome
    compiled = {
      compiled: { expression, type, ast: parsed.ast, variables: namedVariables(parsed.ast), run: (activation, meter) => runMetered(parsed, activation, meter) },
    }
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string)
  cache.set(expression, compiled)
  return compiled
}

/** The failure of one expression, in upstream's words (`expression '...' resulted in error: ...`). */
export class ExpressionError extends Error {
  constructor(
    message: string,
    /** Out of budget: no further expression of the evaluation runs. */
    readonly outOfBudget = false,
  ) {
    super(message)
    this.name = 'ExpressionError'
  }
}

export interface PolicyVariable {
  readonly name: string
  readonly expression: string
}

/** The budget of one policy evaluation, shared by its expressions. */
export interface CostBudget {
  remaining: number
}

export function newCostBudget(): CostBudget {
  return { remaining: CEL_RULE_LIMITS.perRequestBudget }
}

type VariableOutcome = { value: unknown } | { error: ExpressionError }

/** Policy expressions of every request share the thread's slices: between two of them, other requests may run. */
const slice = new TimeSlice()

/**
 * The expressions of one policy, one binding and one parameter object over one request.
 * `activation` holds everything but `variables`; `size` is how many values it has.
 */
export class PolicyEvaluation {
  private readonly variableValues = new Map<string, Promise<VariableOutcome>>()
  /** Each variable's expression and position: a variable may name only those before it, as upstream composes them. */
  private readonly variableDefinitions: Map<string, { expression: string; index: number }>

  constructor(
    private readonly activation: Record<string, unknown>,
    private readonly size: number,
    variables: readonly PolicyVariable[],
    readonly budget: CostBudget = newCostBudget(),
  ) {
    this.variableDefinitions = new Map(variables.map((v, index) => [v.name, { expression: v.expression, index }]))
  }

  /**
   * Evaluates `expression`; throws an ExpressionError for any failure.
   * `meter` is the meter of the expression a variable is evaluated for;
   * without one, the expression has its own and pays the budget.
   */
  async evaluate(expression: string, before = Infinity, meter?: CostMeter): Promise<unknown> {
    await slice.pause()
    const outcome = compilePolicyExpression(expression)
    if ('error' in outcome) throw new ExpressionError(outcome.error)
    const compiled = outcome.compiled
    if (meter === undefined && this.budget.remaining < 0) throw new ExpressionError(OUT_OF_BUDGET, true)
    const own = meter ?? new CostMeter(CEL_RULE_LIMITS.perCallLimit)
    let result: { value: unknown } | { error: unknown }
    try {
      const variables: Record<string, unknown> = {}
      for (const name of compiled.variables) {
        const definition = this.variableDefinitions.get(name)
        if (!definition || definition.index >= before) continue
        const value = await this.variable(name, own)
        if ('error' in value) throw value.error
        variables[name] = value.value
      }
      const value = await compiled.run({ ...this.activation, variables }, own)
      // An object or list result (a mutation, a patch) is converted to JSON next: it is charged as that walk will go.
      if (meter === undefined && typeof value === 'object' && value !== null) own.charge(Math.ceil(deepCount(value, own.remaining * 10 + 1) / 10))
      result = { value }
    } catch (err) {
      result = { error: err }
    }
    if (meter === undefined) {
      if (own.cost > this.budget.remaining) throw new ExpressionError(OUT_OF_BUDGET, true)
      this.budget.remaining -= own.cost
    }
    if ('value' in result) return result.value
    const err = result.error
    if (own.exceeded || isCostLimitExceeded(err)) {
      throw new ExpressionError(`expression '${expression}' resulted in error: ${CALL_LIMIT_EXCEEDED}`)
    }
    if (err instanceof ExpressionError) throw err
    throw new ExpressionError(`expression '${expression}' resulted in error: ${celErrorText(err)}`)
  }

  /** The variable's value, evaluated the first time it is read and charged to the meter of the expression that reads it. */
  private variable(name: string, meter: CostMeter): Promise<VariableOutcome> {
    let outcome = this.variableValues.get(name)
    if (!outcome) {
      const definition = this.variableDefinitions.get(name)
      if (!definition) return Promise.resolve({ error: new ExpressionError(`no such variable: ${name}`) })
      outcome = this.evaluate(definition.expression, definition.index, meter).then(
        (value) => ({ value }),
        (err: unknown) => ({ error: err instanceof ExpressionError ? err : new ExpressionError(String(err)) }),
      )
      this.variableValues.set(name, outcome)
    }
    return outcome
  }
}
