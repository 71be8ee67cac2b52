/**
 * Parsing and type-checking one expression in an environment built from
 * the Kubernetes base (library/index.ts), the one path every use site
 * takes: after parsing, the library's has() and matches() are replaced by
 * cel-go's behaviour (library/presence-and-regex.ts), literal regular
 * expressions are validated as cel-go validates them, the checker runs, and
 * aggregate literals are checked for one element type, and the tree is
 * given its run-time cost meter (meter.ts).
 * Issues are worded as cel-go's one-line form, `ERROR: <input>:1:5: ...`.
 */
import type { ASTNode, Environment, ParseError, TypeError } from '@marcbachmann/cel-js'
import { heterogeneousLiteral } from './library/aggregate-literals.js'
import { replaceBuiltins } from './library/presence-and-regex.js'
import { invalidRegexLiterals } from './library/regex.js'
import { meterTree } from './meter.js'

export type ParsedExpression = ReturnType<Environment['parse']>

export type CheckOutcome = { parsed: ParsedExpression; type: string } | { issue: string }

interface Located {
  range?: { start: number }
  summary?: string
  message?: string
}

/** `ERROR: <input>:line:col: message`, cel-go's one-line form of a compile issue. */
export function issueText(expression: string, err: ParseError | TypeError | Error | Located): string {
  const { range, summary, message: full } = err as Located
  const message = summary ?? (full ?? '').split('\n')[0] ?? ''
  if (!range) return `ERROR: <input>: ${message}`
  const before = expression.slice(0, range.start).split('\n')
  const line = before.length
  const column = (before[before.length - 1] ?? '').length + 1
  return `ERROR: <input>:${line}:${column}: ${message}`
}

/** The nodes directly under `node` in the library's syntax tree. */
export function childNodes(node: ASTNode): ASTNode[] {
  switch (node.op) {
    case 'value':
    case 'id':
      return []
    case '.':
    case '.?':
      return [node.args[0]]
    case 'call':
      return node.args[1]
    case 'rcall':
      return [node.args[1], ...node.args[2]]
    case 'list':
      return node.args
    case 'map':
      return node.args.flat()
    case '!_':
    case '-_':
      return [node.args]
    default:
      return [...node.args]
  }
}

/** Parses and checks `expression`; the program and its type, or the issue in cel-go's words. */
export function parseAndCheck(env: Environment, expression: string): CheckOutcome {
  let parsed: ParsedExpression
  try {
    parsed = env.parse(expression)
  } catch (err) {
    return { issue: issueText(expression, err as Error) }
  }
  replaceBuiltins(parsed.ast, childNodes)
  const badRegex = invalidRegexLiterals(parsed.ast, childNodes)
  if (badRegex) return { issue: issueText(expression, badRegex) }
  const checked = parsed.check()
  if (!checked.valid) return { issue: checked.error ? issueText(expression, checked.error) : 'ERROR: <input>: invalid expression' }
  const mixed = heterogeneousLiteral(parsed.ast, childNodes)
  if (mixed) return { issue: issueText(expression, mixed) }
  // Every program runs with a cost meter (meter.ts): its tree is metered here, once, on the one path all use sites take.
  meterTree(parsed.ast)
  return { parsed, type: checked.type ?? 'dyn' }
}
