/**
 * The costs of the trees cel-go expands its comprehension macros to
 * (parser/macro.go, ext/comprehensions.go, ext/bindings.go), so that a
 * macro the library keeps as one call costs what its expansion costs:
 *
 *   all      accumulator = true;  while not strictly false: acc = acc && p
 *   exists   accumulator = false; while not strictly true:  acc = acc || p
 *   exists_one  count = 0; count = p ? count + 1 : count;  count == 1
 *   map      acc = [];  acc = acc + [f]         (with a filter: q ? acc + [f] : acc)
 *   filter   acc = [];  acc = p ? acc + [x] : acc
 *   transformMap / transformMapEntry   acc = {}; acc = cel.@mapInsert(acc, ...)
 *
 * Reading the accumulator costs one, creating a list ten, a map thirty; the
 * loop condition and the step are paid once per element of the range.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { COST_UNITS, type Range, ONE, ZERO, add, range } from './range.js'

const { listCreate, mapCreate } = COST_UNITS

export interface LoopCosts {
  readonly init: Range
  readonly result: Range
  /** The loop condition and the step, paid for every element. */
  readonly perElement: Range
}

export type ComprehensionShape =
  | {
      readonly kind: 'loop'
      readonly range: ASTNode
      /** One variable (the element, or a map's key) or two (index or key, then element or value). */
      readonly variables: readonly [string] | readonly [string, string]
      readonly body: readonly ASTNode[]
      costs(body: readonly Range[]): LoopCosts
      /** Whether the macro builds a list or a map (map, filter, transform*), rather than a bool or a count. */
      readonly builds: boolean
      /** What a list-building macro appends for each element: a body expression, or the element itself (filter). */
      readonly appends?: ASTNode | 'element'
    }
  | { readonly kind: 'bind'; readonly variables: readonly [string]; readonly value: ASTNode; readonly body: readonly ASTNode[] }

/** Reading the accumulator, the cost of an `acc` operand or of the result `acc`. */
const ACCU = ONE

/** `acc && p` and `acc || p`: the accumulator alone may decide. */
const shortCircuit = (p: Range): Range => range(ACCU.min, ACCU.max + p.max)

/** `q ? step : acc`. */
const filtered = (q: Range, step: Range): Range => add(q, range(Math.min(step.min, ACCU.min), Math.max(step.max, ACCU.max)))

function quantifier(kind: string): ((body: readonly Range[]) => LoopCosts) | undefined {
  switch (kind) {
    case 'all':
      // @not_strictly_false(acc) costs two.
      return ([p]) => ({ init: ZERO, result: ACCU, perElement: add(range(2), shortCircuit(p ?? ZERO)) })
    case 'exists':
      // @not_strictly_false(!acc) costs three.
      return ([p]) => ({ init: ZERO, result: ACCU, perElement: add(range(3), shortCircuit(p ?? ZERO)) })
    case 'exists_one':
    case 'existsOne':
      // The step is `p ? acc + 1 : acc`; the result `acc == 1` costs two.
      return ([p]) => ({ init: ZERO, result: range(2), perElement: filtered(p ?? ZERO, range(2)) })
  }
  return undefined
}

/** The collecting comprehensions: what one element adds to the accumulator, and what an empty one costs. */
function collector(kind: string, withFilter: boolean): ((body: readonly Range[]) => LoopCosts) | undefined {
  const plan = (init: number, stepOf: (t: Range) => Range) => (body: readonly Range[]): LoopCosts => {
    const t = body[body.length - 1] ?? ZERO
    const step = stepOf(t)
    return { init: range(init), result: ACCU, perElement: withFilter ? filtered(body[0] ?? ZERO, step) : step }
  }
  switch (kind) {
    case 'map':
    case 'transformList':
      // acc + [t]: the join costs one, the accumulator one, the one-element list ten.
      return plan(listCreate, (t) => add(range(1 + 1 + listCreate), t))
    case 'transformMap':
      // cel.@mapInsert(acc, k, t).
      return plan(mapCreate, (t) => add(range(3), t))
    case 'transformMapEntry':
      // cel.@mapInsert(acc, t).
      return plan(mapCreate, (t) => add(range(2), t))
  }
  return undefined
}

/** The macros of two variables (cel-go's ext.TwoVarComprehensions). */
const TWO_VARIABLES = new Set(['all', 'exists', 'existsOne', 'transformList', 'transformMap', 'transformMapEntry'])

const name = (node: ASTNode | undefined): string | undefined => (node?.op === 'id' ? node.args : undefined)

/**
 * The comprehension a member call is, when it is one of the macros: `fn`
 * on `receiver` with `args`, `isMacro` telling whether the parser expanded
 * it (a method of the same name on a list is an ordinary call).
 */
export function comprehensionShape(fn: string, receiver: ASTNode, args: readonly ASTNode[], isMacro: boolean): ComprehensionShape | undefined {
  if (!isMacro) return undefined
  const first = name(args[0])
  if (first === undefined) return undefined
  if (fn === 'bind' && name(receiver) === 'cel' && args.length === 3) {
    return { kind: 'bind', variables: [first], value: args[1] as ASTNode, body: [args[2] as ASTNode] }
  }
  const second = name(args[1])
  // Two variables: all(i, v, p), transformList(i, v, [filter,] t), ...
  if (second !== undefined && args.length >= 3 && TWO_VARIABLES.has(fn)) {
    const body = args.slice(2)
    const costs = quantifier(fn) ?? collector(fn, body.length === 2)
    const appends = fn === 'transformList' ? { appends: body[body.length - 1] as ASTNode } : {}
    const builds = fn.startsWith('transform')
    return costs ? { kind: 'loop', range: receiver, variables: [first, second], body, costs, builds, ...appends } : undefined
  }
  const body = args.slice(1)
  if (fn === 'filter' && body.length === 1) {
    // acc = p ? acc + [x] : acc, where acc + [x] costs one, one, ten and one.
    const costs = ([p]: readonly Range[]): LoopCosts => ({ init: range(listCreate), result: ACCU, perElement: filtered(p ?? ZERO, range(13)) })
    return { kind: 'loop', range: receiver, variables: [first], body, costs, builds: true, appends: 'element' }
  }
  const costs = fn === 'map' ? collector('map', body.length === 2) : body.length === 1 ? quantifier(fn) : undefined
  const appends = fn === 'map' ? { appends: body[body.length - 1] as ASTNode } : {}
  return costs ? { kind: 'loop', range: receiver, variables: [first], body, costs, builds: fn === 'map', ...appends } : undefined
}
