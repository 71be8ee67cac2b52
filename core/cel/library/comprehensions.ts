/**
 * cel-go's two-variable comprehensions (ext.TwoVarComprehensions, in
 * Kubernetes' environment from 1.32): over a list the variables are the
 * index and the element, over a map the key and the value.
 *
 *   all(i, v, p)  exists(i, v, p)  existsOne(i, v, p)
 *   transformList(i, v, [filter,] expr)       -> list
 *   transformMap(k, v, [filter,] expr)        -> map of the same keys
 *   transformMapEntry(k, v, [filter,] entry)  -> map merged from one-entry maps
 *
 * `all` and `exists` absorb errors as `&&` and `||` do: a false (true)
 * element decides even when another element fails.
 */
import type { ASTNode, Environment } from '@marcbachmann/cel-js'
import {
  type CelType,
  type CheckContext,
  type Checker,
  type Evaluator,
  type IterationContext,
  type Macro,
  type MacroCall,
  accepts,
  iterationVariable,
} from './macro-api.js'

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry'

interface Comprehension extends Macro {
  readonly kind: Kind
  readonly range: ASTNode
  readonly args: ASTNode[]
  first?: IterationContext
  second?: IterationContext
}

/** The two variables' types over a range of type `range`. */
function variableTypes(checker: Checker, range: CelType, node: ASTNode): [CelType, CelType] {
  const dyn = checker.getType('dyn')
  if (range.kind === 'list') return [checker.getType('int'), range.valueType ?? dyn]
  if (range.kind === 'map') return [range.keyType ?? dyn, range.valueType ?? dyn]
  if (range.kind === 'dyn') return [dyn, dyn]
  throw checker.createError('invalid_comprehension_range', `expression of type '${range.name}' cannot be the range of a comprehension`, node)
}

function typeCheck(checker: Checker, macro: Macro, ctx: CheckContext): CelType {
  const m = macro as Comprehension
  const [firstArg, secondArg, ...body] = m.args
  const first = iterationVariable(firstArg, checker, m.kind)
  const second = iterationVariable(secondArg, checker, m.kind)
  const rangeType = checker.check(m.range, ctx)
  const [firstType, secondType] = variableTypes(checker, rangeType, m.range)
  m.first = ctx.forkWithVariable(first, firstType)
  m.second = m.first.forkWithVariable(second, secondType)
  const types = body.map((node) => checker.check(node, m.second as CheckContext))
  const result = types[types.length - 1] as CelType
  if (body.length === 2 && !accepts(types[0] as CelType, 'bool')) {
    throw checker.createError('invalid_macro_argument', `${m.kind} filter must evaluate to bool`, body[0] as ASTNode)
  }
  switch (m.kind) {
    case 'all':
    case 'exists':
    case 'existsOne':
      if (!accepts(result, 'bool')) throw checker.createError('invalid_macro_argument', `${m.kind} predicate must evaluate to bool`, body[0] as ASTNode)
      return checker.getType('bool')
    case 'transformList':
      return checker.registry.getListType(result)
    case 'transformMap':
      return checker.registry.getMapType(firstType, result)
    case 'transformMapEntry':
      if (result.kind !== 'map' && result.kind !== 'dyn') {
        throw checker.createError('invalid_macro_argument', 'transformMapEntry must evaluate to a map', body[body.length - 1] as ASTNode)
      }
      return result.kind === 'map' ? result : checker.registry.getMapType(checker.getType('dyn'), checker.getType('dyn'))
  }
}

/** The (first, second) pairs of a range value: (index, element) or (key, value). */
function pairs(range: unknown): [unknown, unknown][] {
  if (Array.isArray(range)) return range.map((v, i) => [BigInt(i), v])
  if (range instanceof Map) return [...range.entries()]
  if (range instanceof Set) return [...range].map((v, i) => [BigInt(i), v])
  if (typeof range === 'object' && range !== null) return Object.entries(range)
  throw new Error(`expression of type '${typeof range}' cannot be the range of a comprehension`)
}

function entriesOf(value: unknown): [unknown, unknown][] {
  if (value instanceof Map) return [...value.entries()]
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return Object.entries(value)
  throw new Error('transformMapEntry must evaluate to a map')
}

function evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown {
  const m = macro as Comprehension
  const first = (m.first as IterationContext).reuse(ctx)
  const second = (m.second as IterationContext).reuse(first)
  const body = m.args.slice(2)
  const run = (a: unknown, b: unknown, node: ASTNode) => {
    first.setIterValue(a, evaluator)
    second.setIterValue(b, evaluator)
    return evaluator.run(node, second)
  }
  const items = pairs(evaluator.run(m.range, ctx))
  if (m.kind === 'all' || m.kind === 'exists') {
    const decisive = m.kind === 'exists'
    let failure: unknown
    for (const [a, b] of items) {
      try {
        if (run(a, b, body[0] as ASTNode) === decisive) return decisive
      } catch (err) {
        failure ??= err
      }
    }
    if (failure !== undefined) throw failure
    return !decisive
  }
  if (m.kind === 'existsOne') return items.filter(([a, b]) => run(a, b, body[0] as ASTNode) === true).length === 1
  const filter = body.length === 2 ? body[0] : undefined
  const transform = body[body.length - 1] as ASTNode
  const kept = filter ? items.filter(([a, b]) => run(a, b, filter) === true) : items
  if (m.kind === 'transformList') return kept.map(([a, b]) => run(a, b, transform))
  const out = new Map<unknown, unknown>()
  for (const [a, b] of kept) {
    if (m.kind === 'transformMap') {
      out.set(a, run(a, b, transform))
      continue
    }
    for (const [key, value] of entriesOf(run(a, b, transform))) {
      if (out.has(key)) throw new Error(`insert failed: key ${String(key)} already exists`)
      out.set(key, value)
    }
  }
  return out
}

function expander(kind: Kind) {
  return ({ args, receiver }: MacroCall): Comprehension => ({ kind, range: receiver as ASTNode, args, typeCheck, evaluate, async: false })
}

export function registerComprehensions(env: Environment): Environment {
  for (const kind of ['all', 'exists', 'existsOne', 'transformList', 'transformMap', 'transformMapEntry'] as const) {
    env.registerFunction(`dyn.${kind}(ast, ast, ast): dyn`, expander(kind))
    if (kind.startsWith('transform')) env.registerFunction(`dyn.${kind}(ast, ast, ast, ast): dyn`, expander(kind))
  }
  return env
}
