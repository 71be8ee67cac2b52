/**
 * cel-go's parser limits, which Kubernetes keeps at their defaults
 * (apiserver/pkg/cel/environment/base.go sets none): an expression of more
 * than 100,000 code points is refused before it is parsed, and one whose
 * syntax nests more than 250 levels deep is refused with "max recursion
 * depth exceeded". The library parses chains of operators into trees as
 * deep as the chain is long, and its checker, this server's cost estimate,
 * and the evaluation all walk those trees by recursion: a rule of two
 * thousand `+` ran the thread out of stack and the write answered 500.
 *
 * - Like cel-go's parser, a chain of `||` (or `&&`) becomes a balanced tree
 *   (cel-go's balancer), so a long disjunction upstream accepts is as deep
 *   as the logarithm of its length.
 * - Like cel-go's parser, the depth counted is that of ternaries,
 *   relations, arithmetic, selections, member calls and indexes, one on
 *   top of another; past 250 the expression is refused with cel-go's words.
 * - What cel-go does not count (global calls, list and map literals,
 *   negations, which it folds) is bounded too, by the whole tree's depth,
 *   since this runtime's stack is what the recursion uses: no expression
 *   upstream accepts for a real use nests this deep.
 */
import type { ASTNode } from '@marcbachmann/cel-js'

/** cel-go's default ExpressionSizeCodePointLimit. */
export const EXPRESSION_SIZE_LIMIT = 100_000
/** cel-go's default MaxRecursionDepth. */
export const RECURSION_LIMIT = 250
/**
 * The deepest tree, counting every node, that is checked, estimated and
 * evaluated: the recursion of all three stays well inside the stack from
 * wherever a request calls them.
 */
export const TREE_DEPTH_LIMIT = 500

/** cel-go's messages, at its NoLocation (`<input>:-1:0`). */
export const RECURSION_EXCEEDED = 'ERROR: <input>:-1:0: max recursion depth exceeded'
const sizeExceeded = (size: number): string =>
  `ERROR: <input>:-1:0: expression code point size exceeds limit: size: ${size}, limit ${EXPRESSION_SIZE_LIMIT}`

/** The issue of an expression too long to parse, in cel-go's words; undefined when it is not. */
export function expressionTooLong(expression: string): string | undefined {
  // Each code point is one or two UTF-16 units: the length bounds the count from above and twice the limit from below.
  if (expression.length <= EXPRESSION_SIZE_LIMIT) return undefined
  let size = 0
  for (let i = 0; i < expression.length; i++) {
    const unit = expression.charCodeAt(i)
    if (unit < 0xdc00 || unit > 0xdfff || i === 0 || (expression.charCodeAt(i - 1) & 0xfc00) !== 0xd800) size++
  }
  return size > EXPRESSION_SIZE_LIMIT ? sizeExceeded(size) : undefined
}

/** The nodes cel-go's parser counts for its recursion depth. */
const COUNTED = new Set(['?:', '==', '!=', '<', '<=', '>', '>=', 'in', '+', '-', '*', '/', '%', '.', '.?', 'rcall', '[]', '[?]'])

const LOGICAL = new Set(['||', '&&'])

interface Binary {
  op: string
  args: [ASTNode, ASTNode]
  start: number
  end: number
  meta: { alternate?: unknown; macro?: unknown }
}

const plainLogical = (node: ASTNode, op: string): boolean => {
  const n = node as unknown as Binary
  return n.op === op && !n.meta.alternate && !n.meta.macro
}

/**
 * Rebuilds the chain of `op` under `root` (the parser's left-leaning
 * `((a || b) || c) || d`) as a balanced tree of the same nodes, `root`
 * staying on top; the operands keep their order.
 */
function balanceChain(root: Binary, op: string, balanced: WeakSet<object>): void {
  const nodes: Binary[] = []
  let spine: ASTNode = root as unknown as ASTNode
  while (plainLogical(spine, op)) {
    const n = spine as unknown as Binary
    nodes.push(n)
    balanced.add(n)
    spine = n.args[0]
  }
  if (nodes.length < 3) return
  const operands: ASTNode[] = [spine]
  for (let i = nodes.length - 1; i >= 0; i--) operands.push((nodes[i] as Binary).args[1])
  // The root is taken first, so it stays where its parent points.
  const pool = nodes.slice(1)
  const build = (lo: number, hi: number, node: Binary): ASTNode => {
    const mid = (lo + hi + 1) >> 1
    node.args[0] = mid - 1 === lo ? (operands[lo] as ASTNode) : build(lo, mid - 1, pool.pop() as Binary)
    node.args[1] = mid === hi ? (operands[hi] as ASTNode) : build(mid, hi, pool.pop() as Binary)
    node.start = node.args[0].start
    node.end = node.args[1].end
    return node as unknown as ASTNode
  }
  build(0, operands.length - 1, root)
}

/**
 * Balances the tree's chains of `||` and `&&`, then measures it; returns
 * cel-go's recursion issue when it nests too deep, undefined when it fits.
 * `children` lists a node's operands (checked.ts's childNodes).
 */
export function boundNesting(root: ASTNode, children: (node: ASTNode) => ASTNode[]): string | undefined {
  // The nodes of a chain already balanced, which must not be taken for the top of another.
  const balanced = new WeakSet<object>()
  const pending: { node: ASTNode; counted: number; depth: number }[] = [{ node: root, counted: 0, depth: 1 }]
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { node } = item
    if (LOGICAL.has(node.op) && !balanced.has(node) && plainLogical(node, node.op)) balanceChain(node as unknown as Binary, node.op, balanced)
    const counted = item.counted + (COUNTED.has(node.op) ? 1 : 0)
    if (counted > RECURSION_LIMIT || item.depth > TREE_DEPTH_LIMIT) return RECURSION_EXCEEDED
    for (const child of children(node)) pending.push({ node: child, counted, depth: item.depth + 1 })
  }
  return undefined
}
