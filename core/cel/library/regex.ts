/**
 * Kubernetes' regex library (apiserver/pkg/cel/library/regex.go) and the
 * global form of CEL's `matches`, all on RE2 (regex/re2.ts):
 *
 *   matches(s, re) -> bool          s.find(re) -> string (first match, or '')
 *   s.findAll(re) -> list<string>   s.findAll(re, n) -> list<string> (at most n; all when n < 0)
 *
 * The member form `s.matches(re)` is replaced on the parsed tree
 * (presence-and-regex.ts). A literal pattern RE2 refuses is a compile
 * error, as cel-go's ValidateRegexLiterals makes it.
 */
import type { ASTNode, Environment } from '@marcbachmann/cel-js'
import { CostLimitExceeded } from '../meter.js'
import { RegexWorkExceeded, regexError, regexFind, regexFindAll, userRegexTest } from '../../regex/re2.js'
import { appendAll } from '../../machinery/append-all.js'

/**
 * Runs a match; one the server refuses as too costly (regex/re2.ts) stops
 * the evaluation as its cost limit does, with cel-go's words: the match's
 * real work, not its price, is what passed the bound.
 */
export function boundedMatch<T>(match: () => T): T {
  try {
    return match()
  } catch (err) {
    if (err instanceof RegexWorkExceeded) throw new CostLimitExceeded()
    throw err
  }
}

export function registerRegex(env: Environment): Environment {
  return env
    .registerFunction('matches(string, string): bool', (s: string, re: string) => boundedMatch(() => userRegexTest(re, s)))
    .registerFunction('string.find(string): string', (s: string, re: string) => boundedMatch(() => regexFind(re, s)))
    .registerFunction('string.findAll(string): list<string>', (s: string, re: string) => boundedMatch(() => regexFindAll(re, s)))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) =>
      boundedMatch(() => regexFindAll(re, s, n < 0n ? -1 : Number(n > 1_000_000n ? 1_000_000n : n))),
    )
}

/** A compile issue at a node: where it starts, and cel-go's words. */
export interface NodeIssue {
  readonly range: { start: number }
  readonly summary: string
}

function stringLiteral(node: ASTNode | undefined): string | undefined {
  return node?.op === 'value' && typeof node.args === 'string' ? node.args : undefined
}

/**
 * cel-go's regex literal validator: the first argument of every call named
 * `matches` that is a string literal must compile. For the method form that
 * argument is the pattern; for the global form cel-go looks at the same
 * position, the matched string, and so does this.
 */
export function invalidRegexLiterals(root: ASTNode, children: (node: ASTNode) => ASTNode[]): NodeIssue | undefined {
  const pending: ASTNode[] = [root]
  for (let node = pending.pop(); node; node = pending.pop()) {
    const argument = node.op === 'rcall' && node.args[0] === 'matches' ? node.args[2][0] : node.op === 'call' && node.args[0] === 'matches' ? node.args[1][0] : undefined
    const literal = stringLiteral(argument)
    if (argument && literal !== undefined && regexError(literal) !== undefined) {
      return { range: { start: argument.range.start }, summary: 'invalid matches argument' }
    }
    appendAll(pending, children(node))
  }
  return undefined
}
