/**
 * What one call costs, arguments included, in cel-go's order
 * (checker/cost.go functionCost): the estimates an extension registers for
 * its overloads (the sets library), then the Kubernetes libraries'
 * (kubernetes-calls.ts), then cel-go's own rules for the standard library's
 * functions whose cost grows with their input, and one unit for any other.
 *
 * Functions are named as cel-go names them: operators as `_==_`, `_+_`,
 * `@in`, `_[_]`, namespaced functions as `sets.contains`.
 */
import { kubernetesCallEstimate } from './kubernetes-calls.js'
import { type CostNode, type Sizes, kindOf, typeName } from './node.js'
import { COST_UNITS, ONE, type Range, add, byFactor, multiply, range, sum, union } from './range.js'

const { stringTraversal, regexStringLength } = COST_UNITS

/** A call's own cost, and the size of what it returns when that is known. */
export interface CallEstimate {
  readonly cost: Range
  readonly resultSize?: Range
}

/** The sets library's estimate: every element of one list against every element of the other. */
function setsEstimate(fn: string, args: readonly CostNode[], sizes: Sizes): CallEstimate | undefined {
  const factor = fn === 'sets.equivalent' ? 2 : fn === 'sets.contains' || fn === 'sets.intersects' ? 1 : 0
  if (!factor || args.length !== 2) return undefined
  const [a, b] = args as [CostNode, CostNode]
  return { cost: add(byFactor(multiply(sizes.library(a), sizes.library(b)), factor), ONE) }
}

/** Comparing two values costs one traversal of the shorter one (strings, bytes, lists alike). */
function comparison(args: readonly CostNode[], sizes: Sizes): CallEstimate {
  const [lhs, rhs] = args as [CostNode, CostNode]
  const smallestMax = Math.min(sizes.of(lhs).max, sizes.of(rhs).max)
  return { cost: byFactor(range(smallestMax > 0 ? 1 : 0, smallestMax), stringTraversal) }
}

const traversal = (node: CostNode, sizes: Sizes): Range => byFactor(sizes.of(node), stringTraversal)

const ORDERINGS = new Set(['_<_', '_<=_', '_>_', '_>=_'])

/** cel-go's own estimate for the standard library's functions whose cost depends on their input; undefined for one unit. */
function celGoEstimate(fn: string, target: CostNode | undefined, args: readonly CostNode[], sizes: Sizes): CallEstimate | undefined {
  const [first, second] = args
  if (fn === '_==_' || fn === '_!=_') return comparison(args, sizes)
  if (ORDERINGS.has(fn)) {
    const t = typeName(first?.type)
    return t === 'string' || t === 'bytes' ? comparison(args, sizes) : undefined
  }
  if (fn === '_+_' && first && second) {
    const t = kindOf(first.type) === 'list' ? 'list' : typeName(first.type)
    if (t !== 'string' && t !== 'bytes' && t !== 'list') return undefined
    const resultSize = add(sizes.of(first), sizes.of(second))
    // Joining lists is O(1); the size is tracked all the same.
    return { cost: t === 'list' ? ONE : byFactor(resultSize, stringTraversal), resultSize }
  }
  if (fn === '@in' && second) {
    const inList = { cost: byFactor(sizes.of(second), 1) }
    if (kindOf(second.type) === 'list') return inList
    // A dyn collection may be either; the estimate covers both overloads.
    return kindOf(second.type) === 'dyn' ? { cost: union(inList.cost, ONE) } : undefined
  }
  if (target && first && args.length === 1) {
    switch (fn) {
      case 'startsWith':
      case 'endsWith':
        return { cost: traversal(first, sizes) }
      case 'matches': {
        // One more than the length, so that an empty string against an expensive pattern still costs.
        const input = byFactor(add(sizes.of(target), ONE), stringTraversal)
        return { cost: multiply(input, byFactor(sizes.of(first), regexStringLength)) }
      }
      case 'contains':
        if (typeName(target.type) === 'string') return { cost: multiply(traversal(target, sizes), traversal(first, sizes)) }
        return undefined
      case 'format':
        return typeName(target.type) === 'string' ? { cost: traversal(target, sizes) } : undefined
    }
  }
  if (!target && first && args.length === 1) {
    const sz = sizes.of(first)
    const from = typeName(first.type)
    // A character is at most four bytes in UTF-8.
    if (fn === 'bytes' && from === 'string') return { cost: traversal(first, sizes), resultSize: range(sz.min, sz.max * 4) }
    if (fn === 'string' && from === 'bytes') return { cost: traversal(first, sizes), resultSize: range(Math.floor(sz.min / 4), sz.max) }
    if (fn === 'strings.quote') return { cost: traversal(first, sizes), resultSize: range(sz.min + 2, sz.max * 2 + 2) }
  }
  return undefined
}

/** The cost of calling `fn`, with the costs of its arguments (not its target's) included. */
export function callCost(fn: string, target: CostNode | undefined, args: readonly CostNode[], argCosts: readonly Range[], sizes: Sizes): CallEstimate {
  const argSum = sum(argCosts)
  const own = setsEstimate(fn, args, sizes) ?? kubernetesCallEstimate(fn, target, args, sizes) ?? celGoEstimate(fn, target, args, sizes)
  if (!own) return { cost: add(ONE, argSum) }
  return { cost: add(own.cost, argSum), ...(own.resultSize ? { resultSize: own.resultSize } : {}) }
}
