/**
 * The worst-case cost of a checked expression, estimated before it ever
 * runs, as cel-go's checker estimates it (checker/cost.go) with the
 * Kubernetes libraries' estimates (apiserver/pkg/cel/library/cost.go).
 * Upstream refuses a CRD whose rules cost too much by this estimate
 * (crd/cel-static-cost.ts), so the numbers follow cel-go's rules unit for
 * unit: reading a variable or a field costs one, a constant nothing, a call
 * one unless its cost grows with its input (calls.ts), and a comprehension
 * (`all`, `exists`, `map`, ...) costs its body once per element of its
 * range. How many elements a range may have, and how long a string may
 * be, comes from the use site (a CRD's schema: maxItems, maxLength, ...)
 * through the path by which the expression reaches the data. Paths are
 * cel-go's: every identifier, field and index has one, possibly starting
 * from nothing (`(c ? a : b).f` is `['f']`, an element of a conditional list
 * `['@items']`), and what the use site makes of such a path is its own
 * affair (a CRD reads it from the rule's root, as upstream does). Where the
 * use site knows no size, the sizes the expression gives come next:
 * literals, the entries of literal lists and maps, values bound to a
 * variable (cel-go's computed, entry and local variable sizes).
 *
 * cel-go estimates the tree its macros expand to; @marcbachmann/cel-js
 * keeps the macro call, so each macro's expansion is costed here by the
 * same rules (comprehensions.ts).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import type { CelType } from '../library/macro-api.js'
import { type CallEstimate, callCost } from './calls.js'
import { type ComprehensionShape, comprehensionShape } from './comprehensions.js'
import { type CostNode, type SizeEstimator, Sizes, kindOf } from './node.js'
import { COST_UNITS, ONE, type Range, ZERO, add, multiply, range, sum, union } from './range.js'

export type { SizeEstimator } from './node.js'
export type { Range } from './range.js'

const { selectAndIdent, listCreate, mapCreate } = COST_UNITS

/**
 * An iteration or bound variable in scope: the path of its values (cel-go
 * gives every variable one, empty where its source has none), and the size
 * the expression gives it, which cel-go consults only after the use site's
 * estimate.
 */
interface Binding {
  readonly path: readonly string[]
  readonly size?: Range
  readonly entry?: Entry
}

/**
 * The sizes of a list's or map's entries where the expression tells them
 * (literals, conditionals and joins of them, lists a macro builds, values
 * bound to a variable): cel-go's entry size estimates, which size the
 * elements a loop or an index reads when the use site cannot.
 */
interface Entry {
  readonly kind: 'list' | 'map'
  readonly key: Range
  readonly val: Range
}

const unionEntries = (a: Entry | undefined, b: Entry | undefined): Entry | undefined =>
  a && b ? { kind: a.kind, key: union(a.key, b.key), val: union(a.val, b.val) } : undefined

/** The union of sizes, starting from nothing: [0, 0] for none. */
const unionAll = (sizes: readonly Range[]): Range => (sizes.length === 0 ? range(0) : sizes.reduce(union))

type Node = ASTNode & { readonly checkedType?: CelType }

const typeOf = (node: ASTNode): CelType | undefined => (node as Node).checkedType

const meta = (node: ASTNode): { alternate?: ASTNode; macro?: unknown } => (node as unknown as { meta: { alternate?: ASTNode; macro?: unknown } }).meta

/** cel-go's spelling of the operators the library keeps as node kinds. */
const OPERATOR_FUNCTIONS: Record<string, string> = {
  '==': '_==_', '!=': '_!=_', '<': '_<_', '<=': '_<=_', '>': '_>_', '>=': '_>=_',
  '+': '_+_', '-': '_-_', '*': '_*_', '/': '_/_', '%': '_%_', in: '@in',
  '!_': '!_', '-_': '-_', '[?]': '_[?_]', '.?': '_?._',
}

/** The size a literal has by itself: characters of a string, bytes, or one. */
function literalSize(value: unknown): Range | undefined {
  if (typeof value === 'string') return range([...value].length)
  if (value instanceof Uint8Array) return range(value.length)
  if (value === null || ['boolean', 'number', 'bigint'].includes(typeof value)) return range(1)
  if (typeof value === 'object' && value.constructor.name === 'UnsignedInt') return range(1)
  return undefined
}

/** A negative number literal: cel-go's parser folds `-1` into one constant. */
const isNegativeLiteral = (node: ASTNode): boolean => node.op === '-_' && node.args.op === 'value' && literalSize(node.args.args) !== undefined

class Coster {
  private readonly paths = new Map<ASTNode, readonly string[]>()
  private readonly computed = new Map<ASTNode, Range>()
  /** Sizes of bound variables' reads, used after the use site's estimate (cel-go's local variable sizes). */
  private readonly local = new Map<ASTNode, Range>()
  private readonly entries = new Map<ASTNode, Entry>()
  private readonly scopes = new Map<string, Binding[]>()
  readonly sizes: Sizes

  constructor(estimator: SizeEstimator) {
    this.sizes = new Sizes(estimator)
  }

  node(ast: ASTNode): CostNode {
    const literal = ast.op === 'value' ? ast.args : isNegativeLiteral(ast) ? (ast.args as ASTNode).args : undefined
    let computed = this.computed.get(ast)
    if (!computed && ast.op === 'value') computed = literalSize(ast.args)
    if (!computed && isNegativeLiteral(ast)) computed = range(1)
    if (!computed && ast.op === 'list') computed = range(ast.args.length)
    if (!computed && ast.op === 'map') computed = range(ast.args.length)
    return { type: typeOf(ast), path: this.paths.get(ast), computed, literal, local: this.local.get(ast) }
  }

  /** cel-go's getPath: the path recorded for the node, or none (an empty path). */
  private pathOf(ast: ASTNode): readonly string[] {
    return this.paths.get(ast) ?? []
  }

  private bind(name: string, binding: Binding): void {
    const stack = this.scopes.get(name) ?? []
    stack.push(binding)
    this.scopes.set(name, stack)
  }

  private unbind(name: string): void {
    this.scopes.get(name)?.pop()
  }

  cost(ast: ASTNode): Range {
    switch (ast.op) {
      case 'value':
        return ZERO
      case 'id':
        return this.ident(ast, ast.args)
      case '.':
        return this.select(ast, ast.args[0], ast.args[1])
      case '[]':
        return this.index(ast, ast.args[0], ast.args[1])
      case '&&':
      case '||': {
        // Either side may decide alone: at least the left side, at most both.
        const [lhs, rhs] = ast.args.map((a) => this.cost(a)) as [Range, Range]
        return range(lhs.min, add(lhs, rhs).max)
      }
      case '?:': {
        const [condition, whenTrue, whenFalse] = ast.args
        const costs = [this.cost(condition), this.cost(whenTrue), this.cost(whenFalse)] as [Range, Range, Range]
        this.computed.set(ast, union(this.sizes.of(this.node(whenTrue)), this.sizes.of(this.node(whenFalse))))
        this.setEntry(ast, unionEntries(this.entries.get(whenTrue), this.entries.get(whenFalse)))
        return add(costs[0], union(costs[1], costs[2]))
      }
      case 'list': {
        const cost = add(range(listCreate), sum(ast.args.map((a) => this.cost(a))))
        this.setEntry(ast, { kind: 'list', key: ONE, val: unionAll(ast.args.map((a) => this.sizes.of(this.node(a)))) })
        return cost
      }
      case 'map': {
        const cost = add(range(mapCreate), sum(ast.args.flat().map((a) => this.cost(a))))
        const [keys, values] = [0, 1].map((i) => unionAll(ast.args.map((entry) => this.sizes.of(this.node(entry[i] as ASTNode))))) as [Range, Range]
        this.setEntry(ast, { kind: 'map', key: keys, val: values })
        return cost
      }
      case 'call':
        return this.globalCall(ast, ast.args[0], ast.args[1])
      case 'rcall':
        return this.memberCall(ast, ast.args[0], ast.args[1], ast.args[2])
      case '-_':
        if (isNegativeLiteral(ast)) return ZERO
        return this.call(ast, '-_', undefined, [ast.args])
      case '!_':
        return this.call(ast, '!_', undefined, [ast.args])
      default: {
        const fn = OPERATOR_FUNCTIONS[ast.op]
        const operands = Array.isArray(ast.args) ? (ast.args as ASTNode[]) : []
        // `.?` selects by a constant name, which costs nothing.
        const args = ast.op === '.?' ? [operands[0] as ASTNode] : operands
        return fn ? this.call(ast, fn, undefined, args, ast.op === '.?' ? [ZERO] : []) : add(ONE, sum(args.map((a) => this.cost(a))))
      }
    }
  }

  private ident(ast: ASTNode, name: string): Range {
    const binding = this.scopes.get(name)?.at(-1)
    if (binding?.size) this.local.set(ast, binding.size)
    this.setEntry(ast, binding?.entry)
    this.paths.set(ast, binding ? binding.path : [name])
    return range(selectAndIdent)
  }

  private select(ast: ASTNode, operand: ASTNode, field: string): Range {
    const cost = this.cost(operand)
    // The field is appended to whatever path the operand has, even none: a use site then reads it from its root.
    this.paths.set(ast, [...this.pathOf(operand), field])
    // Reading a field of a map or an object costs one; cel-go does not charge it on dyn.
    const kind = typeOf(operand) ? kindOf(typeOf(operand)) : 'message'
    return kind === 'map' || kind === 'message' || kind === 'param' ? add(cost, range(selectAndIdent)) : cost
  }

  private index(ast: ASTNode, operand: ASTNode, key: ASTNode): Range {
    const cost = this.call(ast, '_[_]', undefined, [operand, key])
    const kind = kindOf(typeOf(operand))
    // cel-go records the path for the list and map overloads; a dyn operand has both, the map's last.
    if (kind === 'list' || kind === 'map' || kind === 'dyn') this.paths.set(ast, [...this.pathOf(operand), kind === 'list' ? '@items' : '@values'])
    // An element of a container whose entries the expression sizes has that size, before any use site's.
    const entry = this.entries.get(operand)
    if (entry) this.computed.set(ast, entry.val)
    return cost
  }

  /** A read of the variable `name` in scope, of type `type`, as a node to size. */
  private variableNode(name: string, type: CelType | undefined): CostNode {
    const binding = this.scopes.get(name)?.at(-1)
    return { type, path: binding?.path, computed: undefined, ...(binding?.size ? { local: binding.size } : {}) }
  }

  private setEntry(ast: ASTNode, entry: Entry | undefined): void {
    if (entry) this.entries.set(ast, entry)
  }

  /** A call of `fn`; `extra` are costs already spent on arguments the list leaves out. */
  call(ast: ASTNode, fn: string, target: ASTNode | undefined, args: readonly ASTNode[], extra: readonly Range[] = []): Range {
    const argCosts = [...args.map((a) => this.cost(a)), ...extra]
    const targetCost = target ? this.cost(target) : ZERO
    const estimate: CallEstimate = callCost(fn, target ? this.node(target) : undefined, args.map((a) => this.node(a)), argCosts, this.sizes)
    if (estimate.resultSize) this.computed.set(ast, estimate.resultSize)
    // Joining two lists (or maps) of sized entries keeps their sizes.
    if (fn === '_+_' && args.length === 2) this.setEntry(ast, unionEntries(this.entries.get(args[0] as ASTNode), this.entries.get(args[1] as ASTNode)))
    return add(targetCost, estimate.cost)
  }

  private globalCall(ast: ASTNode, fn: string, args: readonly ASTNode[]): Range {
    // has(x.f) tests presence without reading: only the operand is charged, as upstream configures cel-go.
    if (fn === 'has' && meta(ast).macro && args[0]?.op === '.') return this.cost(args[0].args[0])
    return this.call(ast, fn, undefined, args)
  }

  private memberCall(ast: ASTNode, fn: string, receiver: ASTNode, args: readonly ASTNode[]): Range {
    const shape = comprehensionShape(fn, receiver, args, meta(ast).alternate !== undefined || meta(ast).macro !== undefined)
    if (shape) return this.comprehension(ast, shape)
    // `format.named(...)`, `sets.contains(...)`: a namespace constant is no receiver, the call is global.
    if (receiver.op === 'id' && meta(receiver).alternate) return this.call(ast, `${receiver.args}.${fn}`, undefined, args)
    return this.call(ast, fn, receiver, args)
  }

  private comprehension(ast: ASTNode, shape: ComprehensionShape): Range {
    if (shape.kind === 'bind') {
      const init = this.cost(shape.value)
      const value = this.node(shape.value)
      const size = value.computed ?? value.local
      const entry = this.entries.get(shape.value)
      this.bind(shape.variables[0], { path: value.path ?? [], ...(size ? { size } : {}), ...(entry ? { entry } : {}) })
      const body = shape.body[0] as ASTNode
      const result = this.cost(body)
      this.unbind(shape.variables[0])
      this.computed.set(ast, this.sizes.of(this.node(body)))
      this.setEntry(ast, this.entries.get(body))
      // cel.bind is a comprehension over an empty list, which costs one list.
      return sum([range(listCreate), init, result])
    }
    const rangeCost = this.cost(shape.range)
    const over = this.node(shape.range)
    const kind = kindOf(over.type)
    const [first, second] = shape.variables
    // cel-go's paths of iteration variables: the range's path (empty if it has none) and the part of
    // each element they hold; anything but a list is taken for a map.
    const entry = this.entries.get(shape.range)
    const isList = entry ? entry.kind === 'list' : kind === 'list'
    const element = (suffix: string, size: Range | undefined): Binding => ({ path: [...(over.path ?? []), suffix], ...(size ? { size } : {}) })
    if (second === undefined) this.bind(first, element(isList ? '@items' : '@keys', isList ? entry?.val : entry?.key))
    else {
      this.bind(first, element(isList ? '@indices' : '@keys', entry?.key))
      this.bind(second, element(isList ? '@items' : '@values', entry?.val))
    }
    const bodyCosts = shape.body.map((b) => this.cost(b))
    // A built list holds what each step appends, or nothing (cel-go's entries of `acc + [t]` with `[]`).
    const appended =
      shape.appends === 'element' ? this.sizes.of(this.variableNode(first, isList ? over.type?.valueType : over.type?.keyType)) : shape.appends ? this.sizes.of(this.node(shape.appends)) : undefined
    this.unbind(first)
    if (second !== undefined) this.unbind(second)
    if (appended) this.setEntry(ast, { kind: 'list', key: ONE, val: union(range(0), appended) })
    const count = this.sizes.of(over)
    // A built list or map has as many entries as the range; a quantifier's bool or count has size one.
    this.computed.set(ast, shape.builds ? count : ONE)
    const { init, result, perElement } = shape.costs(bodyCosts)
    return sum([rangeCost, init, result, multiply(count, perElement)])
  }
}

/** The estimated cost [min, max] of a checked expression, with sizes of the use site's data from `estimator`. */
export function estimateExpressionCost(ast: ASTNode, estimator: SizeEstimator): Range {
  return new Coster(estimator).cost(ast)
}
