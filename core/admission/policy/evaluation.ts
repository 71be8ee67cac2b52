/**
 * Evaluating a policy's expressions for one request and one parameter
 * object, as upstream's CEL filter does: each expression sees `object`,
 * `oldObject`, `request`, `params`, `namespaceObject`, `authorizer` and the
 * policy's `variables`, which are evaluated lazily, once, when an
 * expression first names them (an unused variable that fails costs nothing).
 *
 * Cost: the library has no meter, so each evaluation is charged its
 * estimate from the expression's tree and the size of the input
 * (crd/cel-cost.ts): one call past upstream's per-call limit fails, and all
 * the calls of one policy evaluation draw from upstream's runtime budget.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { childNodes, parseAndCheck } from '../../cel/checked.js'
import { CALL_LIMIT_EXCEEDED, CEL_RULE_LIMITS, estimateCost } from '../../crd/cel-cost.js'
import { policyEnvironment } from './cel-environment.js'
import { messagesAsMaps } from './object-literals.js'

/** Upstream's ErrOutOfBudget wording. */
export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run'

export interface CompiledExpression {
  readonly expression: string
  /** The checked result type (`bool`, `string`, `dyn`, ...). */
  readonly type: string
  readonly ast: ASTNode
  /** The policy variables it names (`variables.x`). */
  readonly variables: readonly string[]
  run(activation: Record<string, unknown>): unknown
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
    pending.push(...childNodes(node))
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
      compiled: { expression, type, ast: parsed.ast, variables: namedVariables(parsed.ast), run: (activation) => parsed(activation) as unknown },
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

  /** Evaluates `expression`; throws an ExpressionError for any failure. */
  async evaluate(expression: string, before = Infinity): Promise<unknown> {
    const outcome = compilePolicyExpression(expression)
    if ('error' in outcome) throw new ExpressionError(outcome.error)
    const compiled = outcome.compiled
    const variables: Record<string, unknown> = {}
    for (const name of compiled.variables) {
      const definition = this.variableDefinitions.get(name)
      if (!definition || definition.index >= before) continue
      const value = await this.variable(name)
      if ('error' in value) throw value.error
      variables[name] = value.value
    }
    this.charge(compiled)
    try {
      return await compiled.run({ ...this.activation, variables })
    } catch (err) {
      const e = err as { summary?: string; message?: string }
      const detail = e.summary ?? (e.message ?? String(err)).split('\n')[0] ?? ''
      throw new ExpressionError(`expression '${expression}' resulted in error: ${detail}`)
    }
  }

  private charge(compiled: CompiledExpression): void {
    if (this.budget.remaining < 0) throw new ExpressionError(OUT_OF_BUDGET, true)
    const cost = estimateCost(compiled.ast, this.size)
    if (cost > CEL_RULE_LIMITS.perCallLimit)
      throw new ExpressionError(`expression '${compiled.expression}' resulted in error: ${CALL_LIMIT_EXCEEDED}`)
    this.budget.remaining -= cost
    if (this.budget.remaining < 0) throw new ExpressionError(OUT_OF_BUDGET, true)
  }

  private variable(name: string): Promise<VariableOutcome> {
    let outcome = this.variableValues.get(name)
    if (!outcome) {
      const definition = this.variableDefinitions.get(name)
      if (!definition) return Promise.resolve({ error: new ExpressionError(`no such variable: ${name}`) })
      outcome = this.evaluate(definition.expression, definition.index).then(
        (value) => ({ value }),
        (err: unknown) => ({ error: err instanceof ExpressionError ? err : new ExpressionError(String(err)) }),
      )
      this.variableValues.set(name, outcome)
    }
    return outcome
  }
}
