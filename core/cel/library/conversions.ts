/**
 * `string(x)` as cel-go converts, replacing the library's on the parsed
 * tree as the string functions are (string-builtins.ts): a double is
 * written as Go's `%g` (`1e+06`, `1.5e-07`, `-0`) where the library wrote
 * JavaScript's (`1000000`, `1.5e-7`, `0`), a timestamp (RFC 3339, as
 * cel-go's standard library converts it) and a duration (`3600s`) are
 * converted where the library had no overload, and bytes that are not
 * UTF-8 fail with cel-go's error instead of turning into U+FFFD.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { callCost } from '../meter-calls.js'
import { meterOf } from '../meter.js'
import { CIDRPrefix, IPAddress } from './ip-address.js'
import { durationText, goG, timestampText } from './string-format.js'
import { type CelType, type CheckContext, type Checker, type Evaluator, type Macro, setNodeMeta } from './macro-api.js'

const CONVERTIBLE = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'google.protobuf.Timestamp', 'google.protobuf.Duration', 'dyn'])

const className = (value: object): string => (value.constructor as { name?: string } | undefined)?.name ?? ''

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** cel-go's string() of `value`. */
export function toCelString(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return goG(value)
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  if (value instanceof Uint8Array) {
    try {
      return utf8.decode(value)
    } catch {
      throw new Error('invalid UTF-8 in bytes, cannot convert to string')
    }
  }
  if (value instanceof Date) return timestampText(value)
  if (typeof value === 'object' && value !== null) {
    const name = className(value)
    if (name === 'UnsignedInt') return String(value)
    if (name === 'Duration') return durationText(value as { seconds: bigint; nanos: number })
  }
  throw new Error("no such overload: 'string'")
}

interface Conversion extends Macro {
  readonly arg: ASTNode
}

const conversion = (arg: ASTNode, call: ASTNode): Conversion => ({
  arg,
  async: false,
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext): CelType {
    const type = checker.check((macro as Conversion).arg, ctx)
    // Other types' conversions (an IP's, a CIDR's) are the libraries' own: the call is theirs again.
    if (!CONVERTIBLE.has(type.kind === 'dyn' ? 'dyn' : type.name)) {
      setNodeMeta(call, 'macro', undefined)
      return checker.check(call, ctx)
    }
    return checker.getType('string')
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown {
    const value = evaluator.run((macro as Conversion).arg, ctx)
    // The call's node is charged 1 already; a string or bytes read whole costs its traversal beside.
    const meter = meterOf(ctx)
    meter.charge(callCost('string', [value], meter.remaining) - 1)
    // A dyn IP or CIDR converts by its own text, as the network library's string() does.
    return value instanceof IPAddress || value instanceof CIDRPrefix ? value.toString() : toCelString(value)
  },
})

/** Makes `node` (a `call`) cel-go's string() when it converts one value; true when it did. */
export function replaceStringConversion(node: Extract<ASTNode, { op: 'call' }>): boolean {
  const [name, args] = node.args
  if (name !== 'string' || args.length !== 1) return false
  setNodeMeta(node, 'macro', conversion(args[0] as ASTNode, node))
  setNodeMeta(node, 'async', false)
  return true
}
