/**
 * Two built-ins of @marcbachmann/cel-js that differ from cel-go, replaced
 * on the parsed tree before it is checked (the library offers no way to
 * override a built-in overload):
 *
 * - `has(e.f)` where `e` is not a plain chain of names (`has(self[0].f)`,
 *   `has(self.items[i].f)`): the library refuses it as an invalid
 *   argument; cel-go allows any operand, so the Gateway API's rules use it.
 * - `s.matches(re)`: the library runs JavaScript's backtracking RegExp;
 *   this runs RE2 (regex/re2.ts), whose time is linear in the input, with
 *   RE2's syntax, as cel-go does.
 *
 * The global form `matches(s, re)` and `find`/`findAll` are ordinary
 * functions (regex.ts).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { userRegexTest } from '../../regex/re2.js'
import { callCost } from '../meter-calls.js'
import { meterOf } from '../meter.js'
import { boundedMatch } from './regex.js'
import { replaceStringBuiltin } from './string-builtins.js'
import { replaceTimestampGetter } from './timestamps.js'
import { replaceStringConversion } from './conversions.js'
import { type CheckContext, type Checker, type Evaluator, type Macro, accepts, setNodeMeta } from './macro-api.js'
import { appendAll } from '../../machinery/append-all.js'

interface Presence extends Macro {
  readonly select: Extract<ASTNode, { op: '.' | '.?' }>
}

/** Whether a value has the field `name` set: a map key or an object's own property. */
export function hasField(value: unknown, name: string): boolean {
  if (value instanceof Map) return value.has(name)
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.hasOwn(value, name) && (value as Record<string, unknown>)[name] !== undefined
  }
  throw new Error(`invalid type for field selection`)
}

const presence = (select: Presence['select']): Presence => ({
  select,
  async: false,
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext) {
    // Checking the selection refuses a field a declared object type does not have.
    checker.check((macro as Presence).select, ctx)
    return checker.getType('bool')
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown) {
    const { select: node } = macro as Presence
    return hasField(evaluator.run(node.args[0], ctx), node.args[1])
  },
})

interface RegexMatch extends Macro {
  readonly receiver: ASTNode
  readonly pattern: ASTNode
}

const regexMatch = (receiver: ASTNode, pattern: ASTNode, call: ASTNode): RegexMatch => ({
  receiver,
  pattern,
  async: false,
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext) {
    const m = macro as RegexMatch
    const target = checker.check(m.receiver, ctx)
    const re = checker.check(m.pattern, ctx)
    if (!accepts(target, 'string') || !accepts(re, 'string')) {
      throw checker.createError('no_matching_overload', `found no matching overload for '${target.name}.matches(${re.name})'`, call)
    }
    return checker.getType('bool')
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown) {
    const m = macro as RegexMatch
    const target = evaluator.run(m.receiver, ctx)
    const re = evaluator.run(m.pattern, ctx)
    if (typeof target !== 'string' || typeof re !== 'string') throw new Error("no such overload: 'matches'")
    const meter = meterOf(ctx)
    meter.charge(callCost('matches', [target, re], meter.remaining))
    return boundedMatch(() => userRegexTest(re, target))
  },
})

/** Whether `node` is `x.f`, `x.f.g`, ... down to a name: the only operand the library's own has() accepts. */
function isNameChain(node: ASTNode): boolean {
  let at: ASTNode = node
  while (at.op === '.' || at.op === '.?') at = at.args[0]
  return at.op === 'id'
}

/** Replaces, in place, the has() and matches() calls of a freshly parsed tree (see above), the string functions of string-builtins.ts, the timestamp getters of timestamps.ts and string() of conversions.ts. */
export function replaceBuiltins(node: ASTNode, children: (node: ASTNode) => ASTNode[]): void {
  const pending: ASTNode[] = [node]
  for (let at = pending.pop(); at; at = pending.pop()) {
    if (at.op === 'call' && at.args[0] === 'has' && at.args[1].length === 1) {
      const operand = at.args[1][0] as ASTNode
      if ((operand.op === '.' || operand.op === '.?') && !isNameChain(operand)) {
        setNodeMeta(at, 'macro', presence(operand))
        setNodeMeta(at, 'async', false)
      }
    } else if (at.op === 'rcall' && at.args[0] === 'matches' && at.args[2].length === 1) {
      setNodeMeta(at, 'macro', regexMatch(at.args[1], at.args[2][0] as ASTNode, at))
      setNodeMeta(at, 'async', false)
    } else if (at.op === 'call') {
      replaceStringConversion(at)
    } else if (at.op === 'rcall') {
      if (!replaceTimestampGetter(at)) replaceStringBuiltin(at)
    }
    appendAll(pending, children(at))
  }
}
