/**
 * `x-kubernetes-validations`: the CEL rules of a structural schema, compiled
 * once when the schema is accepted, evaluated on every write of an object
 * (cel-validate.ts). Upstream: apiextensions-apiserver schema/cel
 * (compilation.go, validation.go) and the rule checks of
 * apis/apiextensions/validation.
 *
 * Each schema node with rules gets its own environment, in which `self`
 * (and `oldSelf`) have the node's type (cel-schema.ts), so a misspelt field
 * or a wrong operand type fails when the CRD is written, not when an object is.
 */
import type { ASTNode, Environment } from '@marcbachmann/cel-js'
import { parseAndCheck } from '../cel/checked.js'
import { kubernetesEnvironment } from '../cel/library/index.js'
import { type CostMeter, runMetered } from '../cel/meter.js'
import { GoLiteral, goQuote } from '../machinery/go-format.js'
import { type FieldError, type FieldPath, invalid, notSupported, required } from '../machinery/field.js'
import type { Checkpointed } from '../machinery/time-slice.js'
import { referencesVariable } from './cel-cost.js'
import { resolveFieldPath } from './cel-field-path.js'
import { type CelSchemaProps, type CelShape, type CelValidationRule, declareShape } from './cel-schema.js'
import { type SizeNode, sizeNode } from './cel-sizes.js'
import { type Cardinality, TotalCost, checkExpressionCost, childCardinality, expressionMaxCost, ruleCost } from './cel-static-cost.js'
import { appendAll } from '../machinery/append-all.js'

export type { CelSchemaProps, CelValidationRule } from './cel-schema.js'
export { validateRules } from './cel-validate.js'

/** A program over an activation of `self` and `oldSelf`; throws the library's errors, or the meter's once it passes its limit. */
export interface CelRuleProgram {
  readonly ast: ASTNode
  run(activation: Record<string, unknown>, meter: CostMeter): unknown
}

export interface CompiledRule {
  readonly rule: CelValidationRule
  readonly program: CelRuleProgram
  readonly messageProgram?: CelRuleProgram
  /** A transition rule: it reads `oldSelf`, so it runs on updates only (or always, with optionalOldSelf). */
  readonly usesOldSelf: boolean
  /** The normalized `fieldPath`, appended to the node's path when the rule fails; '' for none. */
  readonly fieldPath: string
}

/** The rules of one schema node and of the nodes below it that have any. */
export interface CompiledNode {
  /** The schema's `type`, shown as the value of a failed rule (`Invalid value: "object"`). */
  readonly schemaType: string
  readonly shape: CelShape | undefined
  readonly rules: readonly CompiledRule[]
  readonly properties: ReadonlyMap<string, CompiledNode>
  readonly items?: CompiledNode
  readonly additionalProperties?: CompiledNode
  /** Keys of a `x-kubernetes-list-type: map` list, by which list items meet their old selves. */
  readonly listMapKeys?: readonly string[]
}

/** The compiled rules of a schema; undefined when it has none. */
export type CompiledRules = CompiledNode | undefined

export interface CompileOptions {
  /**
   * Whether the schema is the root of a resource, whose `self` also has
   * apiVersion, kind and metadata.name/generateName.
   * @default true
   */
  resourceRoot?: boolean
  /**
   * Whether each rule's worst-case cost is estimated and held to upstream's
   * limits, as when a CRD is written; off where the rules of an accepted
   * schema are compiled to run.
   * @default true
   */
  estimateCost?: boolean
  /**
   * An update that leaves this schema as it was: the per-rule limit is not
   * applied (rules already stored keep working), the per-CRD total still is.
   * @default false
   */
  unchangedSchema?: boolean
}

const SUPPORTED_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired']

let typeCounter = 0

/**
 * A type name rules cannot come to depend on: it changes with every
 * compilation, as upstream's generated `selfType<n>` does.
 */
function uniqueTypeName(): string {
  typeCounter = (typeCounter + 1) % Number.MAX_SAFE_INTEGER
  return `selfType${typeCounter}`
}

/** `%#v` of upstream's ValidationRule, the value its compile errors show. Set pointers print as an address in Go. */
function ruleLiteral(rule: CelValidationRule): GoLiteral {
  const pointer = (type: string, set: boolean) => `(*${type})(${set ? '0xc000000000' : 'nil'})`
  return new GoLiteral(
    `apiextensions.ValidationRule{Rule:${goQuote(rule.rule)}, Message:${goQuote(rule.message)}, ` +
      `MessageExpression:${goQuote(rule.messageExpression)}, ` +
      `Reason:${pointer('apiextensions.FieldValueErrorReason', rule.reason !== undefined)}, ` +
      `FieldPath:${goQuote(rule.fieldPath)}, OptionalOldSelf:${pointer('bool', rule.optionalOldSelf !== undefined)}}`,
  )
}

const hasNewlines = (s: string) => /[\n\r]/.test(s)

/** The checks upstream makes on a rule's own fields before compiling anything. */
function checkRuleFields(rules: readonly CelValidationRule[], schema: CelSchemaProps, path: FieldPath): FieldError[] {
  const errors: FieldError[] = []
  rules.forEach((rule, i) => {
    const at = path.child('x-kubernetes-validations').index(i)
    const text = (rule.rule ?? '').trim()
    const message = (rule.message ?? '').trim()
    if (!text) errors.push(required(at.child('rule'), 'rule is not specified'))
    else if (rule.message && !message) errors.push(invalid(at.child('message'), rule.message, 'message must be non-empty if specified'))
    else if (hasNewlines(message)) errors.push(invalid(at.child('message'), rule.message, 'message must not contain line breaks'))
    else if (hasNewlines(text) && !message) {
      errors.push(required(at.child('message'), 'message must be specified if rule contains line breaks'))
    }
    if (rule.messageExpression !== undefined && typeof rule.messageExpression !== 'string') {
      errors.push(invalid(at.child('messageExpression'), rule.messageExpression, 'must be a string'))
    } else if (rule.messageExpression && !rule.messageExpression.trim()) {
      errors.push(required(at.child('messageExpression'), 'messageExpression must be non-empty if specified'))
    }
    if (rule.reason !== undefined && !SUPPORTED_REASONS.includes(rule.reason)) {
      errors.push(notSupported(at.child('reason'), rule.reason, SUPPORTED_REASONS))
    }
    const fieldPath = rule.fieldPath ?? ''
    if (fieldPath && !fieldPath.trim()) {
      errors.push(invalid(at.child('fieldPath'), fieldPath, 'fieldPath must be non-empty if specified'))
    }
    if (hasNewlines(fieldPath)) errors.push(invalid(at.child('fieldPath'), fieldPath, 'fieldPath must not contain line breaks'))
    if (fieldPath && 'error' in resolveFieldPath(fieldPath, schema)) {
      errors.push(invalid(at.child('fieldPath'), fieldPath, 'fieldPath must be a valid path'))
    }
  })
  return errors
}

/** Parses and checks one expression; the program, or upstream's reason it is refused. */
/**
 * What a schema's rules compile to, kept by schema node and environment:
 * warmRules compiles a CRD's rules in steps just before its validation
 * (some hundreds of rules held the thread 250 to 330 ms in one piece), and
 * the validation's compileRules then finds them made. Kept as long as the
 * schema objects live (a request's body); a schema is not changed once its
 * rules are compiled.
 */
const programsByEnvironment = new WeakMap<Environment, Map<string, CelRuleProgram | string>>()
const environmentsBySchema = new WeakMap<object, { node?: Environments; resourceRoot?: Environments }>()

function compileExpression(env: Environment, expression: string, resultType: 'bool' | 'string'): CelRuleProgram | string {
  let programs = programsByEnvironment.get(env)
  if (!programs) programsByEnvironment.set(env, (programs = new Map()))
  const key = `${resultType}\0${expression}`
  let program = programs.get(key)
  if (program === undefined) programs.set(key, (program = compileExpressionOnce(env, expression, resultType)))
  return program
}

function compileExpressionOnce(env: Environment, expression: string, resultType: 'bool' | 'string'): CelRuleProgram | string {
  const outcome = parseAndCheck(env, expression)
  // The checker's "No such key" on a declared object is cel-go's undefined field.
  if ('issue' in outcome) return `compilation failed: ${outcome.issue}`
  if (outcome.type !== resultType) return resultType === 'bool' ? 'cel expression must evaluate to a bool' : 'must evaluate to a string'
  const { parsed } = outcome
  return { ast: parsed.ast, run: (activation, meter) => runMetered(parsed, activation, meter) }
}

interface Environments {
  shape: CelShape
  /** `oldSelf` of the node's type; the one with `optionalOldSelf` holds an optional of it. */
  plain: Environment
  optional: Environment
}

function environments(schema: CelSchemaProps, resourceRoot: boolean): Environments {
  let kept = environmentsBySchema.get(schema)
  if (!kept) environmentsBySchema.set(schema, (kept = {}))
  const slot = resourceRoot ? 'resourceRoot' : 'node'
  return (kept[slot] ??= environmentsOnce(schema, resourceRoot))
}

function environmentsOnce(schema: CelSchemaProps, resourceRoot: boolean): Environments {
  const base = kubernetesEnvironment()
  const shape = declareShape(base, schema, uniqueTypeName(), resourceRoot)
  const plain = base.clone().registerVariable('self', shape.type).registerVariable('oldSelf', shape.type)
  const optional = base.clone().registerVariable('self', shape.type).registerVariable('oldSelf', `optional<${shape.type}>`)
  return { shape, plain, optional }
}

interface Walk {
  errors: FieldError[]
  /** Set below a list whose items cannot be matched with old items: transition rules are refused there. */
  uncorrelatable?: FieldPath
  /** The schema's estimated rule costs; undefined when costs are not estimated. */
  costs?: { total: TotalCost; checkEachRule: boolean }
}

/** Where a node sits, for its rules' costs: how often it may repeat, and the sizes of its data. */
interface CostContext {
  cardinality: Cardinality
  sizes: SizeNode | undefined
}

/** Estimates an expression's cost on the node and checks it against the limits; nothing when costs are off. */
function costErrors(walk: Walk, at: FieldPath, program: CelRuleProgram, context: CostContext, kind: 'rule' | 'messageExpression'): FieldError[] {
  if (!walk.costs || !context.sizes) return []
  const maxCost = expressionMaxCost(program.ast, context.sizes)
  // A messageExpression runs only once a rule has failed, so its cost is not multiplied.
  const cost = kind === 'rule' ? ruleCost(maxCost, context.cardinality, context.sizes) : maxCost
  const what = kind === 'rule' ? 'estimated rule cost' : 'estimated messageExpression cost'
  return checkExpressionCost(walk.costs.total, at.child(kind), cost, what, walk.costs.checkEachRule)
}

function compileNodeRules(schema: CelSchemaProps, path: FieldPath, resourceRoot: boolean, walk: Walk, cardinality: Cardinality) {
  const rules = schema['x-kubernetes-validations'] ?? []
  if (rules.length === 0) return { shape: undefined, compiled: [] }
  const fieldErrors = checkRuleFields(rules, schema, path)
  appendAll(walk.errors, fieldErrors)
  if (fieldErrors.length > 0) return { shape: undefined, compiled: [] }
  const envs = environments(schema, resourceRoot)
  const costContext: CostContext = { cardinality, sizes: walk.costs ? sizeNode(schema, resourceRoot) : undefined }
  const compiled: CompiledRule[] = []
  rules.forEach((rule, i) => {
    const at = path.child('x-kubernetes-validations').index(i)
    const program = compileExpression(rule.optionalOldSelf ? envs.optional : envs.plain, rule.rule ?? '', 'bool')
    if (typeof program === 'string') {
      walk.errors.push(invalid(at.child('rule'), ruleLiteral(rule), program))
      return
    }
    appendAll(walk.errors, costErrors(walk, at, program, costContext, 'rule'))
    let messageProgram: CelRuleProgram | undefined
    if (rule.messageExpression) {
      const message = compileExpression(envs.plain, rule.messageExpression, 'string')
      if (typeof message === 'string') {
        walk.errors.push(invalid(at.child('messageExpression'), ruleLiteral(rule), `messageExpression ${message}`))
        return
      }
      appendAll(walk.errors, costErrors(walk, at, message, costContext, 'messageExpression'))
      messageProgram = message
    }
    const usesOldSelf = referencesVariable(program.ast, 'oldSelf')
    if (usesOldSelf && walk.uncorrelatable) {
      walk.errors.push(
        invalid(at.child('rule'), rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${String(walk.uncorrelatable)}`),
      )
      return
    }
    if (!usesOldSelf && rule.optionalOldSelf !== undefined) {
      walk.errors.push(invalid(at.child('optionalOldSelf'), rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'))
      return
    }
    const resolved = rule.fieldPath ? resolveFieldPath(rule.fieldPath, schema) : { path: '' }
    compiled.push({ rule, program, messageProgram, usesOldSelf, fieldPath: 'path' in resolved ? resolved.path : '' })
  })
  return { shape: envs.shape, compiled }
}

function compileNode(schema: CelSchemaProps, path: FieldPath, resourceRoot: boolean, walk: Walk, cardinality: Cardinality): CompiledNode | undefined {
  const { shape, compiled } = compileNodeRules(schema, path, resourceRoot, walk, cardinality)
  const below = childCardinality(cardinality, schema)
  const properties = new Map<string, CompiledNode>()
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const child = compileNode(property, path.child('properties').key(name), property['x-kubernetes-embedded-resource'] === true, walk, below)
    if (child) properties.set(name, child)
  }
  let items: CompiledNode | undefined
  if (schema.items) {
    const listType = schema['x-kubernetes-list-type']
    const itemsWalk: Walk = listType === 'map' ? walk : { ...walk, uncorrelatable: walk.uncorrelatable ?? path }
    items = compileNode(schema.items, path.child('items'), schema.items['x-kubernetes-embedded-resource'] === true, itemsWalk, below)
  }
  const extra = schema.additionalProperties
  const additionalProperties =
    typeof extra === 'object'
      ? compileNode(extra, path.child('additionalProperties'), extra['x-kubernetes-embedded-resource'] === true, walk, below)
      : undefined
  if (compiled.length === 0 && properties.size === 0 && !items && !additionalProperties) return undefined
  return {
    schemaType: schema.type ?? '',
    shape,
    rules: compiled,
    properties,
    ...(items ? { items } : {}),
    ...(additionalProperties ? { additionalProperties } : {}),
    ...(schema['x-kubernetes-list-type'] === 'map' ? { listMapKeys: schema['x-kubernetes-list-map-keys'] ?? [] } : {}),
  }
}

/**
 * Compiles every `x-kubernetes-validations` rule of `schema`, whose own
 * path (in the CRD) is `path`. The errors are upstream's, at
 * `<path>...x-kubernetes-validations[i].<field>`, and, when the estimated
 * costs are over their limits, Forbidden at the costly rules and at `path`;
 * rules with compile errors are left out of `compiled`.
 */
export function compileRules(
  schema: CelSchemaProps,
  path: FieldPath,
  options: CompileOptions = {},
): { errors: FieldError[]; compiled: CompiledRules } {
  const total = new TotalCost()
  const walk: Walk = { errors: [], ...(options.estimateCost === false ? {} : { costs: { total, checkEachRule: options.unchangedSchema !== true } }) }
  // The root runs once per object.
  const compiled = compileNode(schema, path, options.resourceRoot ?? true, walk, 1)
  if (walk.costs) appendAll(walk.errors, total.errors(path))
  return { errors: walk.errors, compiled }
}

/**
 * Compiles the rules of `schema` ahead of the validation that follows,
 * a node at a time with a checkpoint between: compileRules then finds them
 * compiled. A schema the validation will refuse is warmed as far as it
 * goes; what cannot be compiled is left to the validation to report.
 */
export function* warmRules(schema: unknown, resourceRoot = true): Checkpointed<void> {
  if (!isSchemaObject(schema)) return
  const rules = schema['x-kubernetes-validations']
  if (Array.isArray(rules) && rules.length > 0) {
    try {
      const envs = environments(schema, resourceRoot)
      for (const rule of rules as unknown[]) {
        if (!isSchemaObject(rule) || typeof rule['rule'] !== 'string') continue
        compileExpression(rule['optionalOldSelf'] ? envs.optional : envs.plain, rule['rule'], 'bool')
        if (typeof rule['messageExpression'] === 'string') compileExpression(envs.plain, rule['messageExpression'], 'string')
      }
    } catch {
      // Typed from a schema that is not structural: the validation finds what is wrong with it.
    }
    yield
  }
  const below = (child: unknown): boolean => isSchemaObject(child) && child['x-kubernetes-embedded-resource'] === true
  if (isSchemaObject(schema.properties)) for (const property of Object.values(schema.properties)) yield* warmRules(property, below(property))
  yield* warmRules(schema.items, below(schema.items))
  yield* warmRules(schema.additionalProperties, below(schema.additionalProperties))
}

const isSchemaObject = (v: unknown): v is CelSchemaProps & Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Whether `schema` or any node below it carries rules. */
export function hasRules(schema: CelSchemaProps | undefined): boolean {
  if (!schema) return false
  if ((schema['x-kubernetes-validations'] ?? []).length > 0) return true
  const extra = schema.additionalProperties
  return (
    Object.values(schema.properties ?? {}).some(hasRules) ||
    hasRules(schema.items) ||
    (typeof extra === 'object' && hasRules(extra))
  )
}
