import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { childNodes } from '../../../core/cel/checked.js'
import { compile } from '../../../core/cel/compile.js'
import { evaluate } from '../../../core/cel/evaluate.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { boundNesting, TREE_DEPTH_LIMIT } from '../../../core/cel/nesting.js'

const RECURSION = 'compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded'

function reason(expression: string): string {
  const result = compile('claims', expression, ['bool'])
  assert.ok('reason' in result, `${expression.slice(0, 40)} compiled`)
  return result.reason
}

function run(expression: string, claims: Record<string, unknown>): unknown {
  const result = compile('claims', expression, ['bool'])
  assert.ok('program' in result, 'reason' in result ? result.reason : '')
  return evaluate(result.program, claims)
}

/** The depth of a parsed tree, counting every node. */
function depth(expression: string): number {
  const { ast } = kubernetesEnvironment().parse(expression)
  assert.equal(boundNesting(ast, childNodes), undefined)
  const pending = [{ node: ast, at: 1 }]
  let deepest = 0
  for (let item = pending.pop(); item; item = pending.pop()) {
    deepest = Math.max(deepest, item.at)
    for (const child of childNodes(item.node)) pending.push({ node: child, at: item.at + 1 })
  }
  return deepest
}

describe("CEL nesting within cel-go's parser limits", () => {
  it('counts operators, selections, member calls and indexes one on another, as cel-go does: 250 pass, 251 do not', () => {
    // n terms: n - 1 additions, a comparison over them and a selection under them.
    const chain = (n: number) => `${Array(n).fill('claims.n').join(' + ')} > 0`
    assert.equal(run(chain(249), { n: 1 }), true)
    assert.equal(reason(chain(250)), RECURSION)
    assert.equal(reason(`${Array(3000).fill('1').join(' * ')} > 0`), RECURSION)
  })

  it("balances a chain of || or && as cel-go's parser does, so thousands of alternatives evaluate as written", () => {
    const alternatives = Array.from({ length: 4000 }, (_, i) => `claims.a == 'v${i}'`).join(' || ')
    assert.ok(depth(alternatives) <= 16, `depth ${depth(alternatives)}`)
    assert.equal(run(alternatives, { a: 'v0' }), true)
    assert.equal(run(alternatives, { a: 'v3999' }), true)
    assert.equal(run(alternatives, { a: 'v4000' }), false)
    const all = Array.from({ length: 4000 }, (_, i) => `claims.a != 'v${i}'`).join(' && ')
    assert.equal(run(all, { a: 'v2000' }), false)
    assert.equal(run(all, { a: 'x' }), true)
    // An error on one side is absorbed by the other's answer, whatever the tree's shape.
    assert.equal(run(`${Array(100).fill('claims.missing == 1').join(' || ')} || true`, {}), true)
  })

  it('bounds what cel-go folds or does not count (negations, calls, literals) by the whole depth of the tree', () => {
    assert.equal(run(`${'!'.repeat(TREE_DEPTH_LIMIT - 2)}true`, {}), true)
    assert.equal(reason(`${'!'.repeat(TREE_DEPTH_LIMIT)}true`), RECURSION)
    // Deep enough to run the parser itself out of stack.
    assert.equal(reason(`${'-'.repeat(50_000)}1 == 1`), RECURSION)
  })

  it('refuses an expression of more than 100,000 code points before parsing it, counting code points', () => {
    assert.equal(
      reason(`'${'a'.repeat(99_993)}' == ''`),
      'compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100001, limit 100000',
    )
    // 99,990 characters outside the BMP are 199,980 UTF-16 units but fewer code points than the limit.
    assert.equal(run(`'${'😀'.repeat(99_990)}' != ''`, {}), true)
  })
})
