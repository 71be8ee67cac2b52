/**
 * String functions of @marcbachmann/cel-js's that differ from cel-go's
 * strings extension, replaced on the parsed tree as `has()` and `matches()`
 * are (presence-and-regex.ts; the library offers no way to override a
 * built-in overload):
 *
 * - `lowerAscii()` and `upperAscii()` change ASCII letters alone; the library
 *   changed every letter (`'ÀB'.lowerAscii()` was `'àb'`, cel-go's `'Àb'`).
 * - `trim()` removes what Go's strings.TrimSpace removes: Unicode white
 *   space, U+0085 among it, and not U+FEFF, which JavaScript's trim takes.
 * - `substring()` counts code points, as cel-go's does, where the library
 *   counted UTF-16 units (`'😀abc'.substring(1)` cut the emoji in half), and
 *   refuses in cel-go's words (`index out of range: 6`, `invalid substring
 *   range. start: 2, end: 1`).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { callCost } from '../meter-calls.js'
import { meterOf } from '../meter.js'
import { type CelType, type CheckContext, type Checker, type Evaluator, type Macro, accepts, setNodeMeta } from './macro-api.js'

/** Go's unicode.IsSpace: ASCII's white space, U+0085, U+00A0, and Unicode's White_Space beyond Latin-1. */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const GO_TRIM = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g')

type Receiver = 'lowerAscii' | 'upperAscii' | 'trim' | 'substring'

/** Each function: how many arguments it takes besides the receiver, and what it does to them. */
const FUNCTIONS: Readonly<Record<Receiver, { arities: readonly number[]; run(text: string, args: readonly bigint[]): string }>> = {
  lowerAscii: { arities: [0], run: (text) => text.replace(/[A-Z]+/g, (s) => s.toLowerCase()) },
  upperAscii: { arities: [0], run: (text) => text.replace(/[a-z]+/g, (s) => s.toUpperCase()) },
  trim: { arities: [0], run: (text) => text.replace(GO_TRIM, '') },
  substring: { arities: [1, 2], run: substring },
}

/** cel-go's substring and substring range over code points, with its errors. */
function substring(text: string, [start, end]: readonly bigint[]): string {
  const points = [...text]
  const length = BigInt(points.length)
  const last = end ?? length
  if (end !== undefined && start! > end) throw new Error(`invalid substring range. start: ${start}, end: ${end}`)
  if (start! < 0n || start! > length) throw new Error(`index out of range: ${start}`)
  if (last < 0n || last > length) throw new Error(`index out of range: ${last}`)
  return points.slice(Number(start), Number(last)).join('')
}

interface StringCall extends Macro {
  readonly name: Receiver
  readonly receiver: ASTNode
  readonly args: readonly ASTNode[]
}

const stringCall = (name: Receiver, receiver: ASTNode, args: readonly ASTNode[], call: ASTNode): StringCall => ({
  name,
  receiver,
  args,
  async: false,
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext): CelType {
    const m = macro as StringCall
    const target = checker.check(m.receiver, ctx)
    const types = m.args.map((arg) => checker.check(arg, ctx))
    if (!accepts(target, 'string') || !types.every((t) => accepts(t, 'int'))) {
      throw checker.createError('no_matching_overload', `found no matching overload for '${target.name}.${m.name}(${types.map((t) => t.name).join(', ')})'`, call)
    }
    return checker.getType('string')
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown {
    const m = macro as StringCall
    const target = evaluator.run(m.receiver, ctx)
    const args = m.args.map((arg) => evaluator.run(arg, ctx))
    if (typeof target !== 'string' || !args.every((a) => typeof a === 'bigint')) throw new Error(`no such overload: '${m.name}'`)
    const meter = meterOf(ctx)
    meter?.charge(callCost(m.name, [target, ...args], meter.remaining))
    return FUNCTIONS[m.name].run(target, args as bigint[])
  },
})

/** Makes `node` (an `rcall`) one of these functions when it calls one with its arity; true when it did. */
export function replaceStringBuiltin(node: Extract<ASTNode, { op: 'rcall' }>): boolean {
  const [name, receiver, args] = node.args
  const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name as Receiver] : undefined
  if (!fn || !fn.arities.includes(args.length)) return false
  setNodeMeta(node, 'macro', stringCall(name as Receiver, receiver, args as ASTNode[], node))
  setNodeMeta(node, 'async', false)
  return true
}
