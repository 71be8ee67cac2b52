/**
 * Compiling a CEL expression from a config file: parse, type-check against
 * the use site's environment, and check the result type, so a syntax or
 * type error stops start-up with the field's path instead of failing the
 * first request (docs/architecture.md). Upstream does the same in
 * authentication/cel/compile.go and authorization/cel/compile.go.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { celGoTypeName, childNodes, parseAndCheck } from './checked.js'
import { type CelVariable, celEnvironment } from './environments.js'
import { CostMeter, PER_CALL_LIMIT, runMetered } from './meter.js'
import { appendAll } from '../machinery/append-all.js'

export { celGoTypeName, childNodes, issueText } from './checked.js'

/** What an expression may evaluate to; `dyn` results (from `claims`) are checked again when evaluated. */
export type CelResultType = 'bool' | 'string' | 'list<string>'

export interface CelProgram {
  readonly expression: string
  readonly variable: CelVariable
  /** The checked result type, in the library's spelling (`bool`, `dyn`, `list<string>`, ...). */
  readonly type: string
  readonly ast: ASTNode
  /**
   * Runs the program over a ready activation (see evaluate.ts) with a meter
   * of upstream's per-call limit; throws the library's errors, or
   * CostLimitExceeded once the evaluation costs more than the limit.
   */
  run(activation: Record<string, unknown>): unknown
}

/** `got` (cel-go's spelling) is set when only the result type is wrong; authorization's message names it. */
export type CompileResult = { program: CelProgram } | { reason: string; got?: string }


/**
 * Whether a checked type satisfies the expected ones. A `bool` is demanded
 * exactly, as upstream does (so `claims.flag == true`, not `claims.flag`);
 * for string results a `dyn` value is accepted and checked at evaluation,
 * since `claims` fields have no static type.
 */
function satisfies(type: string, expected: readonly CelResultType[]): boolean {
  if (expected.includes(type as CelResultType)) return true
  if (expected.includes('bool')) return false
  if (type === 'dyn') return true
  // A mixed list literal checks as plain `list`, i.e. list(dyn).
  return expected.includes('list<string>') && (type === 'list<dyn>' || type === 'list')
}

function mismatch(expected: readonly CelResultType[]): string {
  if (expected.length === 1) return `must evaluate to ${celGoTypeName(expected[0] ?? '')}`
  return `must evaluate to one of [${expected.map(celGoTypeName).join(' ')}]`
}

/**
 * Parses and type-checks `expression` in the environment of `variable`, and
 * checks that it evaluates to one of `expected`. Returns the program, or the
 * reason in upstream's words (`compilation failed: ...`, `must evaluate to bool`).
 */
export function compile(variable: CelVariable, expression: string, expected: readonly CelResultType[]): CompileResult {
  const outcome = parseAndCheck(celEnvironment(variable), expression)
  if ('issue' in outcome) return { reason: `compilation failed: ${outcome.issue}` }
  const { parsed, type } = outcome
  if (!satisfies(type, expected)) return { reason: mismatch(expected), got: celGoTypeName(type) }
  return {
    program: { expression, variable, type, ast: parsed.ast, run: (activation) => runMetered(parsed, activation, new CostMeter(PER_CALL_LIMIT)) },
  }
}

/**
 * Whether the expression selects `variable.field` anywhere, as `x.field` or
 * `x.?field` (also inside `has()` and macros): upstream's hasSelectExp, read
 * from the parsed tree rather than the text, so a string literal that
 * mentions the field does not count.
 */
export function selectsField(ast: ASTNode, variable: string, field: string): boolean {
  const pending: ASTNode[] = [ast]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if ((node.op === '.' || node.op === '.?') && node.args[1] === field) {
      const operand = node.args[0]
      if (operand.op === 'id' && operand.args === variable) return true
    }
    appendAll(pending, childNodes(node))
  }
  return false
}
