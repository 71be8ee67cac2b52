/**
 * The static cost estimate of CEL expressions against the numbers
 * upstream's own tests expect (apiserver/pkg/cel/library/cost_test.go):
 * expressions over literals, with strings and bytes whose size is unknown
 * taken as at most 12, as that test's size estimator does.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { estimateExpressionCost } from '../../../core/cel/cost/estimate.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'

/** Upstream's test estimator: any string or bytes value is at most 12 long, nothing else is known. */
const twelve = ({ type }: { type: { name: string } | undefined }) =>
  type?.name === 'string' || type?.name === 'bytes' ? { min: 0, max: 12 } : undefined

function estimate(expression: string): [number, number] {
  const outcome = parseAndCheck(kubernetesEnvironment(), expression)
  if ('issue' in outcome) assert.fail(outcome.issue)
  const { min, max } = estimateExpressionCost(outcome.parsed.ast, twelve)
  return [min, max]
}

const INTS = '[1, 2, 3, 4, 5]'
const UINTS = '[uint(1), uint(2), uint(3), uint(4), uint(5)]'
const STRINGS = "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']"
const BYTES = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]"
const DURATIONS = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]"

describe('CEL cost estimate (upstream library cost tests)', () => {
  const cases: [string, [number, number]][] = [
    // A list literal costs ten; the list functions one per element, plus a read of each string or bytes.
    [`${INTS}.sum()`, [15, 15]],
    [`${INTS}.isSorted()`, [15, 15]],
    [`${UINTS}.max()`, [20, 20]],
    [`${STRINGS}.min()`, [15, 25]],
    [`${BYTES}.isSorted()`, [25, 35]],
    [`${DURATIONS}.max()`, [20, 20]],
    ["url('https:://kubernetes.io/').getScheme()", [4, 4]],
    ["ip('192.168.0.1')", [2, 2]],
    ["ip('2001:db8:3333:4444:5555:6666:7777:8888')", [4, 4]],
    ["ip('192.168.0.1').family()", [3, 3]],
    ["ip('192.168.0.1') == ip('192.168.0.1')", [5, 5]],
    ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", [8, 8]],
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", [3, 3]],
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", [7, 9]],
    ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", [7, 11]],
    ["'abc 123 def 123'.replace('', 'x')", [3, 3]],
    ["'abc 123 def 123'.split(' ', 1)", [3, 3]],
    ["'  abc 123 def 123  '.trim()", [2, 2]],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", [11, 23]],
    ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", [10, 22]],
    ["'abc 123 def 123'.findAll('123')", [2, 2]],
    ['quantity("200M") == quantity("200M")', [3, 3]],
    // && may stop after its left side: the minimum is the left side's cost.
    ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', [3, 6]],
  ]
  for (const [expression, expected] of cases) {
    it(`${expression} costs ${expected.join('..')}`, () => assert.deepEqual(estimate(expression), expected))
  }
})

describe('CEL cost estimate of comprehensions', () => {
  it('charges the loop condition, the step and the body once per element of a literal range', () => {
    // all: 10 for the list, 1 for the result, then per element 2 (condition) + 1..1+body (x > 0 costs 2).
    assert.deepEqual(estimate('[1, 2, 3].all(x, x > 0)'), [10 + 1 + 3 * 3, 10 + 1 + 3 * 5])
    // exists checks `!acc` as well: 3 per element, and 1..1+body for `acc || p`.
    assert.deepEqual(estimate('[1, 2, 3].exists(x, x > 0)'), [10 + 1 + 3 * 4, 10 + 1 + 3 * 6])
    // map builds a list: 10 to start, and per element acc + [f]: 1 + 1 + 10 + f.
    assert.deepEqual(estimate('[1, 2].map(x, x * 2)'), [10 + 10 + 1 + 2 * 14, 10 + 10 + 1 + 2 * 14])
  })

  it('multiplies nested comprehensions', () => {
    const [, inner] = estimate('[1, 2, 3].all(y, y > 0)')
    const [, nested] = estimate('[1, 2, 3].all(x, [1, 2, 3].all(y, y > 0))')
    assert.equal(nested, 10 + 1 + 3 * (3 + inner))
  })

  it('does not charge has() for the test itself', () => {
    assert.deepEqual(estimate("has({'a': 1}.a)"), [30, 30])
  })
})

/** cel-go's test estimator: a size per path (`x`, `x.@items`, `m.@values`), and bytes at most 12 long. */
function hinted(expression: string, variables: Record<string, string>, hints: Record<string, number>): [number, number] {
  let env = kubernetesEnvironment()
  if (Object.keys(variables).length > 0) {
    env = env.clone()
    for (const [name, type] of Object.entries(variables)) env = env.registerVariable(name, type)
  }
  const outcome = parseAndCheck(env, expression)
  if ('issue' in outcome) assert.fail(outcome.issue)
  const { min, max } = estimateExpressionCost(outcome.parsed.ast, ({ path, type }) => {
    const hint = hints[(path ?? []).join('.')]
    if (hint !== undefined) return { min: 0, max: hint }
    return type?.name === 'bytes' ? { min: 0, max: 12 } : undefined
  })
  return [min, max]
}

describe('CEL cost estimate of bindings and two-variable comprehensions (cel-go ext tests)', () => {
  // expression, variables, size hints, cel-go's estimate
  const cases: [string, Record<string, string>, Record<string, number>, [number, number]][] = [
    // ext/bindings_test.go TestBindings
    [`cel.bind(a, 'hell' + 'o' + '!', "%s, %s, %s".format([a, a, a])) == 'hello!, hello!, hello' + '!'`, {}, {}, [30, 32]],
    [`cel.bind(a, 'hello!', cel.bind(b, 'goodbye', a + ' and, ' + b)) == 'hello! and, goodbye'`, {}, {}, [27, 28]],
    [`cel.bind(a, cel.bind(a, 'world', a + '!'), 'hello ' + a) == 'hello ' + 'world' + '!'`, {}, {}, [30, 31]],
    ['cel.bind(a, x, cel.bind(b, a[0], cel.bind(c, a[1], b + c))) == 10', { x: 'list<int>' }, { x: 3 }, [39, 39]],
    ['cel.bind(a, x, cel.bind(b, a[0], cel.bind(c, a[1], b + c))) == "threeseven"', { x: 'list<string>' }, { x: 3, 'x.@items': 10 }, [38, 40]],
    ['cel.bind(y, 0, cel.bind(y, 1, y != 0))', {}, {}, [22, 22]],
    // ext/comprehensions_test.go TestTwoVarComprehensionsCost
    ['[1, 2, 3, 4].all(i, v, i < 5 && v > 0)', {}, {}, [23, 39]],
    ['{1: 1, 2: 2, 3: 3}.all(i, v, i < 5 && v > 0)', {}, {}, [40, 52]],
    ['!{0: 0}.all(i, v, i < 5 && v > 0)', {}, {}, [35, 39]],
    ['m.all(i, v, i < 5 && v > 0)', { m: 'map<int, int>' }, { m: 3 }, [2, 23]],
    ['m.all(k, v, k < v)', { m: 'map<string, string>' }, { m: 3, 'm.@keys': 16, 'm.@values': 128 }, [2, 23]],
    ['[].transformList(i, v, v) == []', {}, {}, [31, 31]],
    ['[1].transformList(i, v, i) == [0]', {}, {}, [45, 45]],
    ['[3, 2, 1].transformList(i, v, v > i, v) == [3, 2]', {}, {}, [44, 80]],
    ['[].transformMap(k, v, v + 1) == {}', {}, {}, [71, 71]],
    ['{}.transformMap(k, v, v + 1) == {}', {}, {}, [91, 91]],
    ['{1: 2}.transformMap(k, v, v + 1) == {1: 3}', {}, {}, [97, 97]],
    // The bound map's values are five long: v + "world" reads ten characters, not an unknown size.
    ['cel.bind(m, {"hello": "hello"}, m.transformMap(k, v, v + "world")) == {"hello": "helloworld"}', {}, {}, [108, 108]],
    ['{1: 2, 3: 4, 5: 6}.transformMap(k, v, k % 3 == 0, v + 1) == {3: 5}', {}, {}, [104, 116]],
    [
      "m.transformMap(k, v, k.startsWith('legacy') && v.size() == 1, v + [2]) == {'legacy-solo': [1, 2]}",
      { m: 'map<string, list<int>>' },
      { m: 5, 'm.@keys': 16, 'm.@values': 10, 'm.@values.@items': 2 },
      [73, 173],
    ],
    ['{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}', {}, {}, [126, 126]],
    ['m.transformMapEntry(k, v, {v: k}) == m.transformMapEntry(k, v, {v: k})', { m: 'map<string, int>' }, { m: 5, 'm.@keys': 16, 'm.@values': 10 }, [65, 405]],
  ]
  for (const [expression, variables, hints, expected] of cases) {
    it(`${expression} costs ${expected.join('..')}`, () => assert.deepEqual(hinted(expression, variables, hints), expected))
  }
})
