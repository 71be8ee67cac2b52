/**
 * cel-go's homogeneous aggregate literals (on in Kubernetes' base
 * environment): the elements of a list literal, and the keys and values of
 * a map literal, must have one type, but `dyn` goes with anything, so
 * `[claims.a, 'b']` is a list of dyn while `[1, 'a']` is refused with
 * "expected type 'int' but found 'string'". The library's own check also
 * refuses the first, so it is off and this one runs on the checked tree.
 * Literals within a `format()` call are exempt, as in cel-go.
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import type { CelType } from './macro-api.js'
import type { NodeIssue } from './regex.js'
import { appendAll } from '../../machinery/append-all.js'

/** cel-go's spelling of a type: `list(int)`, `map(string, dyn)`. */
export function goTypeName(type: CelType): string {
  return type.name.replaceAll('<', '(').replaceAll('>', ')')
}

/** Whether a value of one type may stand where the other is expected (cel-go's isAssignable, for literal types). */
function assignable(a: CelType, b: CelType): boolean {
  if (a.kind === 'dyn' || b.kind === 'dyn' || a.name === b.name) return true
  if (a.kind !== b.kind || !['list', 'map', 'optional'].includes(a.kind)) return false
  const pairs: [CelType | undefined, CelType | undefined][] = [
    [a.keyType, b.keyType],
    [a.valueType, b.valueType],
  ]
  return pairs.every(([x, y]) => !x || !y || assignable(x, y))
}

function checkedType(node: ASTNode): CelType | undefined {
  return (node as unknown as { checkedType?: CelType }).checkedType
}

/** The first element whose type does not join the ones before it. */
function firstMismatch(elements: readonly ASTNode[]): NodeIssue | undefined {
  let joined: CelType | undefined
  for (const element of elements) {
    const type = checkedType(element)
    if (!type) continue
    if (joined && !assignable(joined, type)) {
      return { range: { start: element.range.start }, summary: `expected type '${goTypeName(joined)}' but found '${goTypeName(type)}'` }
    }
    joined = joined && joined.kind === 'dyn' ? joined : type.kind === 'dyn' ? type : (joined ?? type)
  }
  return undefined
}

/** The first heterogeneous list or map literal of a checked tree, as cel-go reports it. */
export function heterogeneousLiteral(root: ASTNode, children: (node: ASTNode) => ASTNode[]): NodeIssue | undefined {
  const pending: ASTNode[] = [root]
  for (let node = pending.pop(); node; node = pending.pop()) {
    const issue =
      node.op === 'list'
        ? firstMismatch(node.args)
        : node.op === 'map'
          ? (firstMismatch(node.args.map((e) => e[0])) ?? firstMismatch(node.args.map((e) => e[1])))
          : undefined
    if (issue) return issue
    // cel-go exempts whatever a format() call holds (its strings extension registers the exemption): `'%s %d'.format(['a', 1])`.
    if (node.op === 'rcall' && node.args[0] === 'format') continue
    appendAll(pending, children(node))
  }
  return undefined
}
