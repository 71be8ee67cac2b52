/**
 * Parsing and type-checking one expression in an environment built from
 * the Kubernetes base (library/index.ts), the one path every use site
 * takes: an expression past cel-go's parser limits (its length, its
 * nesting) is refused, chains of `||` and `&&` are balanced as cel-go
 * balances them (nesting.ts), the library's has() and matches() are replaced by
 * cel-go's behaviour (library/presence-and-regex.ts), literal regular
 * expressions are validated as cel-go validates them, the checker runs, and
 * aggregate literals are checked for one element type, and the tree is
 * given its run-time cost meter (meter.ts).
 * Issues are worded as cel-go displays them, `ERROR: <input>:1:5: ...`
 * with the line and a marker under the column.
 */
import type { ASTNode, Environment, ParseError, TypeError } from '@marcbachmann/cel-js'
import { heterogeneousLiteral } from './library/aggregate-literals.js'
import { replaceBuiltins } from './library/presence-and-regex.js'
import { invalidRegexLiterals } from './library/regex.js'
import { meterTree } from './meter.js'
import { boundNesting, expressionTooLong, RECURSION_EXCEEDED } from './nesting.js'

export type ParsedExpression = ReturnType<Environment['parse']>

export type CheckOutcome = { parsed: ParsedExpression; type: string } | { issue: string }

interface Located {
  range?: { start: number }
  summary?: string
  message?: string
}

/** `ERROR: <input>:line:col: message` and the line marked under it: cel-go's display of a compile issue. */
export function issueText(expression: string, err: ParseError | TypeError | Error | Located): string {
  const { range, summary, message: full } = err as Located
  let message = summary ?? (full ?? '').split('\n')[0] ?? ''
  let start = range?.start
  const overload = noMatchingOverload(expression, message, (err as { node?: OverloadNode }).node)
  if (overload) ({ message, start } = overload)
  ;({ message, start } = checkerWording(expression, message, start))
  if (start === undefined) return `ERROR: <input>: ${message}`
  const before = expression.slice(0, start).split('\n')
  const line = before.length
  // Columns count code points, as cel-go's source does.
  const leading = [...(before[before.length - 1] ?? '')]
  return `ERROR: <input>:${line}:${leading.length + 1}: ${message}${snippet(expression.split('\n')[line - 1] ?? '', leading.length)}`
}

/** cel-go's longest line shown under an issue, in bytes. */
const MAX_SNIPPET_BYTES = 16_384

const utf8Length = (text: string): number => new TextEncoder().encode(text).length

/**
 * The issue's line and a marker under its column, as cel-go's display of
 * an issue shows them (`\n | self.x\n | .....^`): a dot for each code point
 * before the column, full-width for one that UTF-8 spells in several bytes.
 */
function snippet(lineText: string, column: number): string {
  if (utf8Length(lineText) > MAX_SNIPPET_BYTES) return ''
  const text = lineText.replaceAll('\t', ' ')
  const points = [...text]
  let marker = ''
  for (const point of points.slice(0, column)) marker += (point.codePointAt(0) ?? 0) < 0x80 ? '.' : '\uff0e'
  const at = points[column]
  marker += at !== undefined && (at.codePointAt(0) ?? 0) >= 0x80 ? '\uff3e' : '^'
  return `\n | ${text}\n | ${marker}`
}

/**
 * The checker's issues of a name it does not know, in cel-go's words and
 * where cel-go points: a variable (`undeclared reference to 'x' (in
 * container '')`, at the name) and a field of a declared type (`undefined
 * field 'f'`, at the selecting dot, where cel-go's parser places a selection).
 */
function checkerWording(expression: string, message: string, start: number | undefined): { message: string; start: number | undefined } {
  const variable = /^Unknown variable: (\S+)$/.exec(message)
  if (variable) return { message: `undeclared reference to '${variable[1]}' (in container '')`, start }
  const field = /^No such key: (\S+)$/.exec(message)
  if (field) {
    const dot = start === undefined ? -1 : expression.lastIndexOf('.', start - 1)
    return { message: `undefined field '${field[1]}'`, start: dot >= 0 ? dot : start }
  }
  return { message, start }
}

/** What an overload error's node tells of where its operator or call is. */
interface OverloadNode {
  op?: string
  pos?: number
  args?: unknown
}

/** cel-go's spelling of a type in its messages: `list(int)`, `map(string, int)`, `null_type`. */
export function celGoTypeName(type: string): string {
  return type.replaceAll('<', '(').replaceAll('>', ')').replace(/\bnull\b/g, 'null_type')
}

/** cel-go's function names of the operators: `_>_`, `@in`, `-_`, `!_`. */
const OPERATOR_FUNCTIONS: Readonly<Record<string, string>> = { in: '@in', '-': '-_', '!': '!_' }

/**
 * The library's "no such overload" of an operator or a call, as cel-go's
 * checker words it (`found no matching overload for '_>_' applied to
 * '(int, string)'`, `'startsWith' applied to 'string.(int)'`) and where it
 * points: at the operator, or at a call's opening parenthesis, as cel-go's
 * parser places those expressions.
 */
function noMatchingOverload(expression: string, message: string, node: OverloadNode | undefined): { message: string; start: number | undefined } | undefined {
  const at = (index: number) => (index >= 0 ? index : node?.pos)
  const binary = /^no such overload: (.+) (\S+) (.+)$/.exec(message)
  if (binary && !message.includes('(')) {
    const [, left = '', op = '', right = ''] = binary
    const rightNode = Array.isArray(node?.args) ? (node.args[1] as OverloadNode | undefined) : undefined
    const start = rightNode?.pos === undefined ? node?.pos : at(expression.lastIndexOf(op, rightNode.pos - 1))
    return { message: `found no matching overload for '${OPERATOR_FUNCTIONS[op] ?? `_${op}_`}' applied to '(${celGoTypeName(left)}, ${celGoTypeName(right)})'`, start }
  }
  const unary = /^no such overload: ([-!])(\S+)$/.exec(message)
  if (unary) {
    const [, op = '', operand = ''] = unary
    return { message: `found no matching overload for '${OPERATOR_FUNCTIONS[op]}' applied to '(${celGoTypeName(operand)})'`, start: node?.pos }
  }
  const call = /^found no matching overload for '(?:(.+)\.)?([A-Za-z_]\w*)\((.*)\)'$/.exec(message)
  if (call) {
    const [, receiver, name = '', args = ''] = call
    const argTypes = args === '' ? [] : args.split(/, (?![^(<]*[)>])/).map(celGoTypeName)
    const signature = `${receiver === undefined ? '' : `${celGoTypeName(receiver)}.`}(${argTypes.join(', ')})`
    const open = new RegExp(`${name}\\s*\\(`).exec(expression.slice(node?.pos ?? 0))
    const start = open && node?.pos !== undefined ? node.pos + open.index + open[0].length - 1 : node?.pos
    return { message: `found no matching overload for '${name}' applied to '${signature}'`, start }
  }
  return undefined
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

/**
 * Methods of bytes the library adds to CEL (`b.json()`, `b.hex()`,
 * `b.base64()`, `b.string()`, `b.at(i)`) that no Kubernetes environment
 * declares: `bytes(self.s).json()` would parse a user's text into values of
 * any depth. No type of Kubernetes' environment has a method of these names,
 * so each call is refused as cel-go refuses an undeclared function, at its
 * opening parenthesis.
 */
const UNDECLARED_METHODS = new Set(['json', 'hex', 'base64', 'string', 'at'])

function undeclaredMethod(expression: string, root: ASTNode): Located | undefined {
  const pending: ASTNode[] = [root]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.op === 'rcall' && UNDECLARED_METHODS.has(node.args[0])) {
      const name = node.args[0]
      return { range: { start: expression.indexOf('(', node.args[1].end) }, summary: `undeclared reference to '${name}' (in container '')` }
    }
    pending.push(...childNodes(node))
  }
  return undefined
}

/** The names of the functions each environment declares, any receiver and arity. */
const declaredNames = new WeakMap<Environment, ReadonlySet<string>>()

/**
 * A call of a function the environment does not declare under any
 * signature: cel-go's checker reports an undeclared reference where the
 * library reports no matching overload.
 */
function undeclaredFunction(env: Environment, issue: string): string {
  const call = /^(ERROR: <input>:\d+:\d+: )found no matching overload for '([A-Za-z_]\w*)' applied to '[^\n]*'(\n[^]*)?$/.exec(issue)
  if (!call) return issue
  let names = declaredNames.get(env)
  if (!names) {
    names = new Set(env.getDefinitions().functions.map((f) => f.name))
    declaredNames.set(env, names)
  }
  return names.has(call[2] ?? '') ? issue : `${call[1]}undeclared reference to '${call[2]}' (in container '')${call[3] ?? ''}`
}

/** Parses and checks `expression`; the program and its type, or the issue in cel-go's words. */
export function parseAndCheck(env: Environment, expression: string): CheckOutcome {
  const tooLong = expressionTooLong(expression)
  if (tooLong) return { issue: tooLong }
  let parsed: ParsedExpression
  try {
    parsed = env.parse(expression)
  } catch (err) {
    // The parser recurses once per prefix operator (`!!!…`), which cel-go folds: past the stack, it is cel-go's recursion issue.
    if (err instanceof RangeError) return { issue: RECURSION_EXCEEDED }
    return { issue: issueText(expression, err as Error) }
  }
  const tooDeep = boundNesting(parsed.ast, childNodes)
  if (tooDeep) return { issue: tooDeep }
  const undeclared = undeclaredMethod(expression, parsed.ast)
  if (undeclared) return { issue: issueText(expression, undeclared) }
  replaceBuiltins(parsed.ast, childNodes)
  const badRegex = invalidRegexLiterals(parsed.ast, childNodes)
  if (badRegex) return { issue: issueText(expression, badRegex) }
  const checked = parsed.check()
  if (!checked.valid) return { issue: checked.error ? undeclaredFunction(env, issueText(expression, checked.error)) : 'ERROR: <input>: invalid expression' }
  const mixed = heterogeneousLiteral(parsed.ast, childNodes)
  if (mixed) return { issue: issueText(expression, mixed) }
  // Every program runs with a cost meter (meter.ts): its tree is metered here, once, on the one path all use sites take.
  meterTree(parsed.ast)
  return { parsed, type: checked.type ?? 'dyn' }
}
