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
 * - `substring()`, `indexOf()` and `lastIndexOf()` on a string count code
 *   points, as cel-go's do, where the library counted UTF-16 units
 *   (`'😀abc'.substring(1)` cut the emoji in half, `'😀abc'.indexOf('a')` was
 *   2), and refuse in cel-go's words (`index out of range: 6`, `invalid
 *   substring range. start: 2, end: 1`), quirks included: cel-go's
 *   `''.indexOf('a')` is an error. On a list, `indexOf` and `lastIndexOf`
 *   are the lists library's (lists.ts), chosen by the receiver.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { callCost } from '../meter-calls.js'
import { meterOf } from '../meter.js'
import { indexOf, lastIndexOf, substring } from './code-points.js'
import { listIndexOf, listLastIndexOf } from './lists.js'
import { type CelType, type CheckContext, type Checker, type Evaluator, type Macro, accepts, setNodeMeta } from './macro-api.js'

/** Go's unicode.IsSpace: ASCII's white space, U+0085, U+00A0, and Unicode's White_Space beyond Latin-1. */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const GO_TRIM = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g')

type Receiver = 'lowerAscii' | 'upperAscii' | 'trim' | 'substring' | 'indexOf' | 'lastIndexOf'

interface Builtin {
  /** How many arguments it takes besides the receiver. */
  arities: readonly number[]
  /** Whether a receiver and arguments of these types have an overload; a string receiver with int arguments when absent. */
  accepts?(target: CelType, args: readonly CelType[]): boolean
  /** What it answers: a string's, or a list's where it has a list overload. */
  returns: 'string' | 'int'
  run(target: unknown, args: readonly unknown[]): unknown
}

/** `indexOf` and `lastIndexOf`: a string with a string (and an int offset), or a list with an element. */
const searchAccepts = (target: CelType, args: readonly CelType[]): boolean => {
  if (target.kind === 'dyn') return true
  if (target.kind === 'list') return args.length === 1 && (!target.valueType || accepts(args[0]!, target.valueType.name) || target.valueType.kind === 'dyn')
  return accepts(target, 'string') && accepts(args[0]!, 'string') && (args.length === 1 || accepts(args[1]!, 'int'))
}

/** A string search's arguments, or a refusal as the library's overload resolution gives it. */
function stringSearch(name: Receiver, text: unknown, args: readonly unknown[]): [string, string, bigint | undefined] {
  const [search, offset] = args
  if (typeof text !== 'string' || typeof search !== 'string' || (offset !== undefined && typeof offset !== 'bigint')) throw new Error(`no such overload: '${name}'`)
  return [text, search, offset]
}

const FUNCTIONS: Readonly<Record<Receiver, Builtin>> = {
  lowerAscii: { arities: [0], returns: 'string', run: (text) => (text as string).replace(/[A-Z]+/g, (s) => s.toLowerCase()) },
  upperAscii: { arities: [0], returns: 'string', run: (text) => (text as string).replace(/[a-z]+/g, (s) => s.toUpperCase()) },
  trim: { arities: [0], returns: 'string', run: (text) => (text as string).replace(GO_TRIM, '') },
  substring: { arities: [1, 2], returns: 'string', run: (text, args) => substring(text as string, args as bigint[]) },
  indexOf: {
    arities: [1, 2],
    accepts: searchAccepts,
    returns: 'int',
    run: (target, args) => (Array.isArray(target) && args.length === 1 ? listIndexOf(target, args[0]) : indexOf(...stringSearch('indexOf', target, args))),
  },
  lastIndexOf: {
    arities: [1, 2],
    accepts: searchAccepts,
    returns: 'int',
    run: (target, args) =>
      Array.isArray(target) && args.length === 1 ? listLastIndexOf(target, args[0]) : lastIndexOf(...stringSearch('lastIndexOf', target, args)),
  },
}

/** A type as the library's own overload errors name it (checked.ts words the error as cel-go: `list(int)`). */
const shown = (type: CelType): string => type.name

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
    const fn = FUNCTIONS[m.name]
    const target = checker.check(m.receiver, ctx)
    const types = m.args.map((arg) => checker.check(arg, ctx))
    const ok = fn.accepts ? fn.accepts(target, types) : accepts(target, 'string') && types.every((t) => accepts(t, 'int'))
    if (!ok) {
      throw checker.createError('no_matching_overload', `found no matching overload for '${shown(target)}.${m.name}(${types.map(shown).join(', ')})'`, call)
    }
    return checker.getType(fn.returns)
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown {
    const m = macro as StringCall
    const fn = FUNCTIONS[m.name]
    const target = evaluator.run(m.receiver, ctx)
    const args = m.args.map((arg) => evaluator.run(arg, ctx))
    if (fn.returns === 'string' && (typeof target !== 'string' || !args.every((a) => typeof a === 'bigint'))) throw new Error(`no such overload: '${m.name}'`)
    const meter = meterOf(ctx)
    meter.charge(callCost(m.name, [target, ...args], meter.remaining))
    return fn.run(target, args)
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
