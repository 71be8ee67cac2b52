/**
 * A run-time cost meter for CEL, as cel-go's CostTracker keeps one: every
 * step of an evaluation and every element or character a value grows by is
 * counted while the expression runs, and the evaluation stops as soon as
 * the count passes its limit, with cel-go's "operation cancelled: actual
 * cost limit exceeded". @marcbachmann/cel-js has no meter of its own, so
 * one is added to each compiled tree, once (meterTree):
 *
 * - every node of the expression charges one step when it is evaluated
 *   (`&&`, `||` and `?:` charge nothing themselves, as in cel-go; their
 *   operands do), so a comprehension pays for each element it visits,
 *   nested ones for each pair, and so on;
 * - list and map literals charge cel-go's creation costs (10 and 30);
 * - `+`, comparisons, `in` and every function call charge what
 *   meter-calls.ts prices from their arguments' sizes, before the library
 *   builds the result: a concatenation or a replace that would pass the
 *   limit is cancelled before its value exists.
 *
 * The meter travels in the activation (under a symbol no expression can
 * name), so an evaluation that waits for an authorization check keeps
 * charging its own meter when it resumes.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { childNodes } from './checked.js'
import { type Priced, binaryCost, callPricer } from './meter-calls.js'
import { appendAll } from '../machinery/append-all.js'

/** cel-go's message for an evaluation stopped by its cost limit, which upstream's messages quote. */
export const ACTUAL_COST_EXCEEDED = 'operation cancelled: actual cost limit exceeded'

/** The most one evaluation may cost: upstream's PerCallLimit (apiserver/pkg/apis/cel/config.go). */
export const PER_CALL_LIMIT = 1_000_000

/** Thrown (and rethrown through the library's error handling) once a meter passes its limit. */
export class CostLimitExceeded extends Error {
  readonly summary = ACTUAL_COST_EXCEEDED
  constructor() {
    super(ACTUAL_COST_EXCEEDED)
    this.name = 'CostLimitExceeded'
  }
}

/** Whether an error thrown by an evaluation is the meter's cancellation. */
export function isCostLimitExceeded(err: unknown): boolean {
  return err instanceof CostLimitExceeded || (err as { summary?: unknown } | null)?.summary === ACTUAL_COST_EXCEEDED
}

/** The cost of one evaluation (or of several that share a limit, as a policy's lazily evaluated variables do). */
export class CostMeter {
  /** What has been charged so far: cel-go's ActualCost. */
  cost = 0
  /** The largest charge let through: ten elements or characters a value could grow by per unit. */
  largestCharge = 0
  /** The charge refused when the evaluation was cancelled (the work it priced was never done); 0 while running. */
  refusedCharge = 0
  constructor(readonly limit: number) {}

  /**
   * Adds `amount`; past the limit, the evaluation is cancelled (and stays
   * so: every later charge throws too). A refused charge counts as one past
   * the limit, since the work it priced is not done: a replace that would
   * have built a gigabyte costs no more than a loop stopped at the limit.
   */
  charge(amount: number): void {
    if (this.cost + amount > this.limit) {
      this.cost = Math.max(this.cost, this.limit + 1)
      this.refusedCharge ||= amount
      throw new CostLimitExceeded()
    }
    this.cost += amount
    if (amount > this.largestCharge) this.largestCharge = amount
  }

  /** What may still be charged before the limit. */
  get remaining(): number {
    return Math.max(0, this.limit - this.cost)
  }

  get exceeded(): boolean {
    return this.cost > this.limit
  }
}

/** The key under which an activation carries its meter. */
export const METER_KEY: unique symbol = Symbol('cel.costMeter')

interface Context {
  getValue(key: unknown): unknown
}

type Evaluate = (ev: unknown, ast: ASTNode, ctx: Context) => unknown

/** What the library's nodes carry beside their public fields, as metered here. */
interface LibraryNode {
  readonly meta: { alternate?: LibraryNode; macro?: { evaluate: Evaluate }; evaluate: Evaluate }
  evaluate: Evaluate
  readonly op: string
  readonly args: unknown
  readonly left?: ASTNode
  readonly right?: ASTNode
  readonly receiverWithArgs?: ASTNode[]
  readonly handle?: (...args: unknown[]) => unknown
  [METERED]?: true
}

const METERED: unique symbol = Symbol('cel.metered')

/**
 * The meter of the evaluation `ctx` belongs to, for the library's own
 * functions that charge as they run: the running one's (see `current`),
 * since a program that cannot wait carries none in its activation.
 */
export function meterOf(ctx: unknown): CostMeter {
  return required(ctx as Context)
}

/**
 * The meter of the evaluation running synchronously, if any: the fast way
 * to the meter. Set only while runMetered is on the stack, so a part of an
 * evaluation that resumes after waiting (when nothing else runs) finds it
 * unset and looks in its activation instead.
 */
let current: CostMeter | undefined

/**
 * What the running evaluation pays for each error the library builds. An
 * error absorbed by a loop (`l.all(x, 1/0 > 0)`), by `||` or by `&&` costs
 * upstream nothing, but building one here takes some 2 to 4 µs where a
 * unit of cost otherwise takes a tenth of one: uncharged, a loop of errors
 * at the per-call limit held the thread 0.4 to 0.8 s (4 to 5 s while the
 * errors kept their stack traces). At this price it takes about as long as
 * any evaluation at the limit; a rule meets the limit only past some
 * 50,000 errors.
 */
export const ERROR_COST = 20

/** Charges the running evaluation, if any, for an error built at one of its nodes. */
export function chargeError(): void {
  current?.charge(ERROR_COST)
}

function required(ctx: Context): CostMeter {
  if (current !== undefined) return current
  const meter = ctx.getValue(METER_KEY) as CostMeter | undefined
  // An expression compiled to be metered runs only with a meter: an evaluation without one is a bug, not a free pass.
  if (meter === undefined) throw new Error('internal error: CEL evaluation without a cost meter')
  return meter
}

/** The evaluation the library would run for `node`: its alternate (a macro's expansion, a constant), its macro, or its own. */
function inner(node: LibraryNode): Evaluate {
  const { alternate, macro, evaluate } = node.meta
  if (alternate) return (ev, _ast, ctx) => alternate.evaluate(ev, alternate as unknown as ASTNode, ctx)
  if (macro) return (ev, _ast, ctx) => macro.evaluate(ev, macro as unknown as ASTNode, ctx)
  return evaluate
}

const isPromise = (v: unknown): v is Promise<unknown> => v instanceof Promise

/** Runs the operands of a call as the library does (last first), each through its own metered evaluate. */
function operands(ev: unknown, nodes: readonly ASTNode[], ctx: Context): unknown[] | Promise<unknown[]> {
  const values = new Array<unknown>(nodes.length)
  let waiting = false
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as unknown as LibraryNode
    values[i] = node.evaluate(ev, node as unknown as ASTNode, ctx)
    if (isPromise(values[i])) waiting = true
  }
  return waiting ? Promise.all(values) : values
}

function charged<T>(meter: CostMeter, price: Priced, then: () => T): T {
  meter.charge(price)
  return then()
}

/** `l op r` for the operators whose cost depends on their operands (`+`, comparisons, `in`). */
function meteredBinary(node: LibraryNode, op: string): Evaluate {
  const handle = node.handle as (l: unknown, r: unknown, ast: ASTNode, ev: unknown) => unknown
  return (ev, ast, ctx) => {
    const meter = required(ctx)
    const left = (node.left as unknown as LibraryNode).evaluate(ev, node.left as ASTNode, ctx)
    const right = (node.right as unknown as LibraryNode).evaluate(ev, node.right as ASTNode, ctx)
    if (isPromise(left) || isPromise(right)) {
      return Promise.all([left, right]).then(([l, r]) => charged(meter, binaryCost(op, l, r, meter.remaining), () => handle(l, r, ast, ev)))
    }
    meter.charge(binaryCost(op, left, right, meter.remaining))
    return handle(left, right, ast, ev)
  }
}

/** A function call: its arguments are evaluated, priced, and only then handed to the function. */
function meteredCall(node: LibraryNode): Evaluate {
  const [name] = node.args as [string]
  const price = callPricer(name)
  if (node.op === 'call') {
    const handle = node.handle as (args: unknown, ast: ASTNode, ev: unknown) => unknown
    const nodes = (node.args as [string, ASTNode[]])[1]
    return (ev, ast, ctx) => {
      const meter = required(ctx)
      const args = operands(ev, nodes, ctx)
      if (isPromise(args)) return args.then((a) => charged(meter, price(a, meter.remaining), () => handle(a, ast, ev)))
      meter.charge(price(args, meter.remaining))
      return handle(args, ast, ev)
    }
  }
  const handle = node.handle as (args: unknown, ev: unknown, ast: ASTNode) => unknown
  const nodes = node.receiverWithArgs as ASTNode[]
  return (ev, ast, ctx) => {
    const meter = required(ctx)
    const args = operands(ev, nodes, ctx)
    if (isPromise(args)) return args.then((a) => charged(meter, price(a, meter.remaining), () => handle(a, ev, ast)))
    meter.charge(price(args, meter.remaining))
    return handle(args, ev, ast)
  }
}

const PRICED_OPERATORS = new Set(['+', '==', '!=', '<', '<=', '>', '>=', 'in'])
/** cel-go's ListCreateBaseCost and MapCreateBaseCost. */
const CREATE_COST: Record<string, number> = { list: 10, map: 30 }
/** Operators cel-go gives no cost of their own: their operands pay. */
const FREE = new Set(['&&', '||', '?:'])

/** The evaluation that charges `node`'s own cost before doing what the library would. */
function meteredEvaluate(node: LibraryNode): Evaluate | undefined {
  const { alternate, macro } = node.meta
  if (!alternate && !macro) {
    if (PRICED_OPERATORS.has(node.op) && node.handle && node.left && node.right) return meteredBinary(node, node.op)
    if ((node.op === 'call' || node.op === 'rcall') && node.handle) return meteredCall(node)
  }
  if (FREE.has(node.op) && !alternate && !macro) return undefined
  const run = inner(node)
  const cost = (!alternate && !macro && CREATE_COST[node.op]) || 1
  return (ev, ast, ctx) => {
    const meter = current ?? required(ctx)
    if (meter.cost + cost > meter.limit) meter.charge(cost)
    else meter.cost += cost
    return run(ev, ast, ctx)
  }
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** cel-go's error for an int past int64, which the library lets through from these nodes. */
const overflow = (): Error => new Error('integer overflow')

/**
 * `evaluate` refusing the ints cel-go refuses and the library computes:
 * `-9223372036854775808 / -1`, `-9223372036854775808 % -1` (0 here),
 * `-(-9223372036854775808)`, and `int()` of a double at or past ±2^63
 * (cel-go's bounds are exclusive: `int(-9223372036854775808.0)` overflows);
 * and `uint()` of a negative int is cel-go's overflow.
 */
function checkedInt(node: LibraryNode, evaluate: Evaluate): Evaluate {
  const argType = node.op === 'call' ? (node as { argTypes?: readonly { name?: string }[] }).argTypes?.[0]?.name : undefined
  const fromDouble = argType === 'double'
  const fromInt = argType === 'int'
  if (node.op === '%' && node.handle && node.left && node.right) {
    const handle = node.handle as (l: unknown, r: unknown, ast: ASTNode, ev: unknown) => unknown
    const left = node.left as unknown as LibraryNode
    const right = node.right as unknown as LibraryNode
    return (ev, ast, ctx) => {
      const meter = current ?? required(ctx)
      meter.charge(1)
      const l = left.evaluate(ev, node.left as ASTNode, ctx)
      const r = right.evaluate(ev, node.right as ASTNode, ctx)
      if (isPromise(l) || isPromise(r)) return Promise.all([l, r]).then(([a, b]) => (a === INT64_MIN && b === -1n ? Promise.reject(overflow()) : handle(a, b, ast, ev)))
      if (l === INT64_MIN && r === -1n) throw overflow()
      return handle(l, r, ast, ev)
    }
  }
  if (node.op === 'call' && (node.args as [string])[0] === 'uint') {
    // The library words a negative int as a string it cannot convert: cel-go's is an overflow.
    return (ev, ast, ctx) => {
      try {
        return evaluate(ev, ast, ctx)
      } catch (err) {
        if ((err as { summary?: string }).summary === 'uint() type error: cannot convert to uint' && fromInt) throw new Error('unsigned integer overflow')
        throw err
      }
    }
  }
  const check = (value: unknown): unknown => {
    if (typeof value === 'bigint' && (value > INT64_MAX || value < INT64_MIN || (fromDouble && value === INT64_MIN))) throw overflow()
    return value
  }
  return (ev, ast, ctx) => {
    const value = evaluate(ev, ast, ctx)
    return isPromise(value) ? value.then(check) : check(value)
  }
}

/** Whether `node` may compute an int cel-go refuses as an overflow (see checkedInt). */
function mayOverflow(node: LibraryNode): boolean {
  if (node.op === '/' || node.op === '%' || node.op === '-_') return true
  return node.op === 'call' && ((node.args as [string])[0] === 'int' || (node.args as [string])[0] === 'uint')
}

/**
 * Adds the meter to a parsed and checked tree, once: each node of the
 * expression gets an evaluate that charges its cost to the activation's
 * meter before doing the library's work. Nodes a macro builds around the
 * expression's own (a comprehension's loop) run the expression's nodes for
 * every element, so they need no charge of their own.
 */
export function meterTree(root: ASTNode): void {
  const pending: ASTNode[] = [root]
  for (let node = pending.pop(); node; node = pending.pop()) {
    const n = node as unknown as LibraryNode
    if (!n[METERED]) {
      n[METERED] = true
      const evaluate = meteredEvaluate(n)
      if (evaluate) n.evaluate = mayOverflow(n) && !n.meta.macro && !n.meta.alternate ? checkedInt(n, evaluate) : evaluate
    }
    appendAll(pending, childNodes(node))
  }
}

/** The activation with `meter` in it, for a program whose tree meterTree has metered. */
export function withMeter(activation: Record<string, unknown>, meter: CostMeter): Record<string, unknown> {
  return { ...activation, [METER_KEY]: meter }
}

function settled(meter: CostMeter, value: unknown): unknown {
  // An error the library absorbs (`||`, `exists`) cannot turn a cancelled evaluation into a result.
  if (meter.exceeded) throw new CostLimitExceeded()
  return value
}

/**
 * Runs a metered program over `activation`, charging `meter`; throws
 * CostLimitExceeded once the meter passes its limit, or the program's own
 * error. A program that waits (an authorization check) returns a promise.
 */
export function runMetered(run: (activation: Record<string, unknown>) => unknown, activation: Record<string, unknown>, meter: CostMeter): unknown {
  let result: unknown
  const outer = current
  current = meter
  // CEL errors are values to the expression, not failures of the server: no stack trace is taken for them.
  const traceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  // Only a program that may wait needs its meter in the activation (see `current`); copying it costs the common case.
  const activationWith = (run as { ast?: { maybeAsync?: boolean } }).ast?.maybeAsync === false ? activation : withMeter(activation, meter)
  try {
    result = run(activationWith)
  } catch (err) {
    throw meter.exceeded ? new CostLimitExceeded() : err
  } finally {
    current = outer
    Error.stackTraceLimit = traceLimit
  }
  if (isPromise(result)) return result.then((value) => settled(meter, value), (err: unknown) => { throw meter.exceeded ? new CostLimitExceeded() : err })
  return settled(meter, result)
}
