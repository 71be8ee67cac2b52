/**
 * Evaluating compiled `x-kubernetes-validations` rules over an object (and
 * its old version on updates), node by node: rules on list items and map
 * values run once per item or value. Transition rules (those reading
 * `oldSelf`) run only where an old value exists to compare with: a map
 * value under the same key, a `list-type: map` item with the same keys;
 * `optionalOldSelf` rules run always and see `oldSelf` as an optional.
 * Upstream: apiextensions-apiserver schema/cel/validation.go.
 */
import { Optional } from '@marcbachmann/cel-js'
import {
  type FieldError,
  FieldPath,
  duplicate,
  forbiddenField,
  invalid,
  required,
} from '../machinery/field.js'
import { CostMeter, isCostLimitExceeded } from '../cel/meter.js'
import { goQuote } from '../machinery/go-format.js'
import { CALL_LIMIT_EXCEEDED, CEL_RULE_LIMITS, type CostBudget, OUT_OF_BUDGET, newCostBudget } from './cel-cost.js'
import type { CelRuleProgram, CompiledNode, CompiledRule, CompiledRules } from './cel-rules.js'
import { CelInputTooLarge, type CelShape, type CelValidationRule, toCelValue } from './cel-schema.js'
import { celErrorText } from '../cel/errors.js'
import { RegexWorkBudget, withRegexBudget } from '../regex/re2.js'

/** Upstream's bound on an evaluated messageExpression (MaxEvaluatedMessageExpressionSizeBytes). */
const MAX_MESSAGE_BYTES = 5 * 1024

/** Thrown to stop every further rule of the request once the budget is spent. */
class Stop extends Error {}

interface Run {
  errors: FieldError[]
  budget: CostBudget
}

/** The rule as upstream names it in messages: its message if it has one, else its text. */
function ruleText(rule: CelValidationRule): string {
  const message = (rule.message ?? '').trim()
  return message || (rule.rule ?? '').trim()
}

function defaultMessage(rule: CelValidationRule): string {
  const message = (rule.message ?? '').trim()
  return message || `failed rule: ${ruleText(rule)}`
}

/** The library's error on one line, in cel-go's wording where they differ. */
const errorText = celErrorText

function fieldErrorFor(rule: CelValidationRule, path: FieldPath, schemaType: string, detail: string): FieldError {
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return forbiddenField(path, detail)
    case 'FieldValueRequired':
      return required(path, detail)
    case 'FieldValueDuplicate':
      return duplicate(path, schemaType)
    default:
      return invalid(path, schemaType, detail)
  }
}

/** What one metered evaluation produced, its cost already drawn from the request's budget. */
type Outcome = { value: unknown } | { error: unknown; cancelled: boolean }

/**
 * Runs `program` under a meter of the per-call limit and draws what it
 * actually cost from the request's budget; past the budget, the run stops
 * with upstream's error, as upstream checks the budget before the result.
 */
function evaluateMetered(run: Run, program: CelRuleProgram, activation: Record<string, unknown>, onOutOfBudget: () => FieldError): Outcome {
  const meter = new CostMeter(CEL_RULE_LIMITS.perCallLimit)
  let outcome: Outcome
  try {
    outcome = { value: program.run(activation, meter) }
  } catch (err) {
    outcome = { error: err, cancelled: isCostLimitExceeded(err) }
  }
  if (meter.cost > run.budget.remaining) {
    run.errors.push(onOutOfBudget())
    throw new Stop()
  }
  run.budget.remaining -= meter.cost
  return outcome
}

/** The messageExpression's text, or undefined when it fails (the rule's message is used instead, as upstream does). */
function evaluateMessage(run: Run, compiled: CompiledRule, activation: Record<string, unknown>, path: FieldPath, node: CompiledNode) {
  const program = compiled.messageProgram
  if (!program) return undefined
  const outcome = evaluateMetered(run, program, activation, () =>
    invalid(path, node.schemaType, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'),
  )
  if ('error' in outcome) {
    if (!outcome.cancelled) return undefined
    const source = compiled.rule.messageExpression ?? ''
    run.errors.push(invalid(path, node.schemaType, `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${goQuote(source)}`))
    throw new Stop()
  }
  const result = outcome.value
  if (typeof result !== 'string') return undefined
  const text = result.trim()
  if (!text || /\n/.test(text) || new TextEncoder().encode(text).length > MAX_MESSAGE_BYTES) return undefined
  return text
}

interface Inputs {
  self: unknown
  oldSelf: unknown
}

function convertInputs(run: Run, shape: CelShape, value: unknown, oldValue: unknown): Inputs {
  const allowed = run.budget.valuesLeft
  const budget = { valuesLeft: allowed, maxDepth: CEL_RULE_LIMITS.maxInputDepth }
  try {
    const self = toCelValue(shape, value, budget)
    const oldSelf = oldValue === undefined || oldValue === null ? undefined : toCelValue(shape, oldValue, budget)
    return { self, oldSelf }
  } finally {
    run.budget.valuesLeft -= allowed - Math.max(0, budget.valuesLeft)
  }
}

function validateExpressions(run: Run, node: CompiledNode, path: FieldPath, value: unknown, oldValue: unknown): void {
  if (node.rules.length === 0 || !node.shape) return
  if (run.budget.remaining <= 0) {
    run.errors.push(invalid(path, node.schemaType, OUT_OF_BUDGET))
    throw new Stop()
  }
  let inputs: Inputs
  try {
    inputs = convertInputs(run, node.shape, value, oldValue)
  } catch (err) {
    if (!(err instanceof CelInputTooLarge)) throw err
    run.errors.push(invalid(path, node.schemaType, OUT_OF_BUDGET))
    throw new Stop()
  }
  const hasOld = inputs.oldSelf !== undefined
  const plain: Record<string, unknown> = hasOld ? { self: inputs.self, oldSelf: inputs.oldSelf } : { self: inputs.self }
  const optional = { self: inputs.self, oldSelf: hasOld ? Optional.of(inputs.oldSelf) : Optional.none() }
  for (const compiled of node.rules) {
    const { rule } = compiled
    if (compiled.usesOldSelf && !hasOld && !rule.optionalOldSelf) continue
    const outcome = evaluateMetered(run, compiled.program, rule.optionalOldSelf ? optional : plain, () => invalid(path, node.schemaType, OUT_OF_BUDGET))
    if ('error' in outcome) {
      if (outcome.cancelled) {
        const detail = `'${CALL_LIMIT_EXCEEDED}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(rule)}`
        run.errors.push(invalid(path, node.schemaType, detail))
        throw new Stop()
      }
      run.errors.push(invalid(path, node.schemaType, `${errorText(outcome.error)} evaluating rule: ${ruleText(rule)}`))
      continue
    }
    if (outcome.value === true) continue
    const at = compiled.fieldPath ? path.child(compiled.fieldPath) : path
    const detail = evaluateMessage(run, compiled, plain, at, node) ?? defaultMessage(rule)
    run.errors.push(fieldErrorFor(rule, at, node.schemaType, detail))
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The old items a list-type map's items are compared with, by their key fields. */
function oldItemsByKey(keys: readonly string[], oldList: unknown): (item: unknown) => unknown {
  const keyOf = (item: unknown) => (isRecord(item) ? JSON.stringify(keys.map((k) => item[k] ?? null)) : undefined)
  const byKey = new Map<string, unknown>()
  if (Array.isArray(oldList)) {
    for (const item of oldList) {
      const key = keyOf(item)
      if (key !== undefined) byKey.set(key, item)
    }
  }
  return (item) => {
    const key = keyOf(item)
    return key === undefined ? undefined : byKey.get(key)
  }
}

function validateNode(run: Run, node: CompiledNode, path: FieldPath, value: unknown, oldValue: unknown): void {
  // Only non-null values are validated; a rule on the parent checks presence.
  if (value === undefined || value === null) return
  validateExpressions(run, node, path, value, oldValue)
  if (Array.isArray(value)) {
    if (!node.items) return
    const oldItem = node.listMapKeys ? oldItemsByKey(node.listMapKeys, oldValue) : () => undefined
    value.forEach((item, i) => validateNode(run, node.items as CompiledNode, path.index(i), item, oldItem(item)))
    return
  }
  if (!isRecord(value)) return
  const old = isRecord(oldValue) ? oldValue : {}
  if (node.additionalProperties) {
    for (const [key, v] of Object.entries(value)) validateNode(run, node.additionalProperties, path.key(key), v, old[key])
  }
  for (const [key, v] of Object.entries(value)) {
    const child = node.properties.get(key)
    if (child) validateNode(run, child, path.child(key), v, old[key])
  }
}

/**
 * Evaluates the compiled rules over `value` (the object, or the part of it
 * the schema describes) at `path`; `oldValue` is the stored version on an
 * update. Returns the failures in upstream's words; once the cost budget
 * is spent, one error says so and no further rule runs.
 */
export function validateRules(
  compiled: CompiledRules,
  value: unknown,
  oldValue: unknown,
  path: FieldPath = FieldPath.root(''),
  budget: CostBudget = newCostBudget(),
): FieldError[] {
  if (!compiled) return []
  const run: Run = { errors: [], budget }
  try {
    // The `matches` of all the rules share one bound on their work, as a CRD's patterns do (regex/re2.ts).
    withRegexBudget(new RegexWorkBudget(), () => validateNode(run, compiled, path, value, oldValue))
  } catch (err) {
    if (!(err instanceof Stop)) throw err
    budget.remaining = -1
  }
  return run.errors
}
