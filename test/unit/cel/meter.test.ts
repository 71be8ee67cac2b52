/**
 * The run-time cost meter: what evaluations cost, and that no syntax runs
 * past the limit (macros, comprehensions of one and two variables,
 * optional chaining, literals, errors absorbed by `||` and `exists`), with
 * the meter's own accounting showing that a value past what the limit
 * permits was never built.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { compile } from '../../../core/cel/compile.js'
import { CelEvaluationError, evaluate } from '../../../core/cel/evaluate.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { ACTUAL_COST_EXCEEDED, CostLimitExceeded, CostMeter, ERROR_COST, PER_CALL_LIMIT, runMetered } from '../../../core/cel/meter.js'
import { deepCount } from '../../../core/cel/meter-calls.js'
import { toCel } from '../../../core/admission/policy/cel-values.js'
import { PolicyEvaluation } from '../../../core/admission/policy/evaluation.js'
import { bindDoubling } from '../../fuzz/cel-attacks.js'

const env = kubernetesEnvironment().registerVariable('l', 'list<string>').registerVariable('s', 'string').registerVariable('n', 'list<int>').registerVariable('t', 'string')
const inputs = { l: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], s: 'a'.repeat(1000), n: Array.from({ length: 1000 }, (_, i) => BigInt(i)) }

function metered(expression: string, limit = PER_CALL_LIMIT): { value?: unknown; error?: unknown; meter: CostMeter } {
  return meteredIn(env, expression, inputs, limit)
}

function meteredIn(
  environment: typeof env,
  expression: string,
  variables: Record<string, unknown>,
  limit = PER_CALL_LIMIT,
): { value?: unknown; error?: unknown; meter: CostMeter } {
  const outcome = parseAndCheck(environment, expression)
  assert.ok('parsed' in outcome, `${expression}: ${'issue' in outcome ? outcome.issue : ''}`)
  const meter = new CostMeter(limit)
  try {
    return { value: runMetered(outcome.parsed, variables, meter), meter }
  } catch (error) {
    return { error, meter }
  }
}

/** Cancelled with cel-go's message, and the meter let no value grow past what the limit permits. */
function assertCancelled(expression: string, limit = PER_CALL_LIMIT): CostMeter {
  const { error, meter } = metered(expression, limit)
  assert.ok(error instanceof CostLimitExceeded, `${expression.slice(0, 80)}: ${String(error)}`)
  assert.equal(error.message, ACTUAL_COST_EXCEEDED)
  assert.equal(meter.cost, limit + 1, 'a cancelled evaluation costs one past its limit')
  assert.ok(meter.largestCharge <= limit, 'no charge let through was larger than the limit')
  return meter
}

describe('the CEL cost meter', () => {
  it("charges what cel-go charges for simple expressions: one per name, select and call, nothing for && and ?:", () => {
    assert.equal(metered("s == 'x'").meter.cost, 3)
    assert.equal(metered('size(l) > 2 && size(l) < 10').meter.cost, 8)
    assert.equal(metered("size(l) > 2 ? 'a' : 'b'").meter.cost, 5)
    // A list literal costs 10 beside its elements; a map 30.
    assert.equal(metered("['a', 'b'] == l").meter.cost, 14)
  })

  it('charges a loop for every element it visits, nested loops for every pair', () => {
    // The macro and its range cost one each; each of the thousand elements runs `x >= 0`, three nodes.
    assert.equal(metered('n.all(x, x >= 0)').meter.cost, 3002)
    // A million pairs of three nodes each pass the limit.
    assertCancelled('n.all(x, n.all(y, x >= 0))')
  })

  it('cancels a list doubled through cel.bind before it builds the list that would pass the limit', () => {
    for (const levels of [23, 26]) {
      const meter = assertCancelled(bindDoubling(levels, 'l'))
      // The doubling that was refused would have copied more elements than the limit allows.
      assert.ok(meter.refusedCharge > PER_CALL_LIMIT / 2, String(meter.refusedCharge))
    }
  })

  it('cancels strings repeated by replace and join before building them', () => {
    const replaced = assertCancelled("s.replace('a', s).replace('a', s).size() > 0")
    assert.ok(replaced.refusedCharge > PER_CALL_LIMIT, 'the second replace was priced at its result, a billion characters')
    assertCancelled("cel.bind(big, s.replace('a', s), [big, big, big, big, big, big, big, big, big, big, big, big].join(big).size() > 0)")
    assertCancelled("l.map(x, s.replace('a', s)).join('').size() > 0", 100_000)
  })

  it('leaves no syntax unmetered: macros, two-variable comprehensions, optionals, literals', () => {
    assertCancelled('n.all(x, n.all(y, n.all(z, x + y + z >= 0)))')
    assertCancelled('n.exists(x, n.exists(y, n.exists(z, x + y + z < 0)))')
    assertCancelled('n.map(x, n.map(y, n.map(z, z))).size() > 0')
    assertCancelled('n.filter(x, n.filter(y, n.filter(z, z > x).size() > 0).size() > 0).size() > 0')
    assertCancelled('n.exists_one(x, n.exists_one(y, n.exists_one(z, z == x)))')
    assertCancelled('n.all(i, x, n.all(j, y, n.all(k, z, x + y + z >= 0)))')
    assertCancelled('n.transformList(i, x, n.transformList(j, y, n.transformList(k, z, z))).size() > 0')
    assertCancelled('n.map(x, n.map(y, n.map(z, {"k": [z, z]}.?k.orValue([])))).size() > 0')
    assertCancelled('n.all(x, n.all(y, n.all(z, optional.of(z).hasValue())))')
  })

  it('keeps a cancelled evaluation cancelled when || or exists absorbs the error', () => {
    assertCancelled('n.exists(x, n.all(y, n.all(z, z >= 0)) && false) || true')
    assertCancelled('n.map(x, n.map(y, n.map(z, z))).size() > 0 || true')
  })

  it('charges each error the library builds, absorbed or not, so a loop of errors stops at the limit', () => {
    const failing = metered('[1, 2, 3].all(i, 1/0 > 0)')
    assert.ok(failing.error)
    // The same nodes but the comparison and its 0, never reached, and an error for each element.
    assert.equal(failing.meter.cost, metered('[1, 2, 3].all(i, 1/1 > 0)').meter.cost - 3 * 2 + 3 * ERROR_COST)
    // Absorbed by ||: the error is still charged.
    assert.equal(metered('1/0 > 0 || true').meter.cost, metered('1/1 > 9 || true').meter.cost - 2 + ERROR_COST)
    // A million iterations' worth of errors is cancelled, not absorbed to the end.
    const { error } = metered('n.all(x, n.all(y, 1/0 > 0))')
    assert.ok(error instanceof CostLimitExceeded, String(error))
  })

  it("prices a timestamp's field in a time zone for the formatting it takes, and without one at 1 as upstream", () => {
    const at = "timestamp('2020-01-01T00:00:00Z')"
    const plain = metered(`${at}.getHours() == 0`)
    const zoned = metered(`${at}.getHours('America/Los_Angeles') == 16`)
    assert.equal(plain.value, true)
    assert.equal(zoned.value, true)
    // The zone's literal is one more node.
    assert.equal(zoned.meter.cost, plain.meter.cost - 1 + 700 + 1)
  })

  it('prices format() for the values it formats as well as its characters', () => {
    // The call: the template's 8 characters and the list and its 3 values, one per ten, and 3 for each of the 4 values;
    // then the list literal (10), its 3 numbers, the template, '' and != (1 each).
    const { value, meter } = metered("'%d %d %d'.format([1, 2, 3]) != ''")
    assert.equal(value, true)
    assert.equal(meter.cost, Math.ceil((8 + 4) / 10) + 3 * 4 + 10 + 3 + 3)
    // A thousand verbs over a thousand values, a thousand times: cancelled, where upstream's price of characters alone let it run.
    const { error } = meteredIn(env, "n.all(x, t.format(n) != '')", { t: '%d'.repeat(1000), n: inputs.n, l: inputs.l, s: inputs.s })
    assert.ok(error instanceof CostLimitExceeded, String(error))
  })

  it('counts the values of a walk, and with characters their characters, lists of scalars at once', () => {
    const value = ['ab', 1n, ['cde', new Map([['k', 'vw']])], new Uint8Array(3), null]
    // The outer list and its 5 items, the inner list's 2, the map's key and value.
    assert.equal(deepCount(value, 1e9), 10)
    assert.equal(deepCount(value, 1e9, true), 10 + 2 + 3 + 1 + 2)
    // Past the cap the walk stops: a count is at most one list's length past it.
    assert.ok(deepCount(Array(1000).fill('x'), 10) <= 1000 + 1)
  })

  it('runs an ordinary rule to its result', () => {
    assert.equal(metered("l.all(x, x.size() == 1) && s.startsWith('a') && n.exists(i, i == 999)").value, true)
  })

  it("prices quantity() of a number of many thousand digits for converting it, and short ones as upstream", () => {
    const quantities = kubernetesEnvironment().registerVariable('q', 'string')
    const run = (expression: string, q: string) => meteredIn(quantities, expression, { q })
    // A name, the call (its string's traversal, one per ten characters) and the method call.
    const short = run('quantity(q).isInteger()', '1500Mi')
    assert.equal(short.value, true)
    assert.equal(short.meter.cost, 3)
    assert.equal(run('isQuantity(q)', '9'.repeat(4000)).meter.cost, 401)
    // Three million digits took the thread 0.9 s a call: past the per-call limit, refused before it is read.
    for (const expression of ['quantity(q).isInteger()', 'isQuantity(q)']) {
      const { error } = run(expression, '9'.repeat(2_900_000))
      assert.ok(error instanceof CostLimitExceeded, `${expression}: ${String(error)}`)
      assert.equal(error.message, ACTUAL_COST_EXCEEDED)
    }
  })

  it('prices size() and the conversions of a long string for reading it, and of a short one at 1 as upstream', () => {
    const strings = kubernetesEnvironment().registerVariable('t', 'string').registerVariable('n', 'list<int>')
    const thousand = Array.from({ length: 1000 }, (_, i) => BigInt(i))
    const run = (expression: string, t: string) => meteredIn(strings, expression, { t, n: thousand })
    // Below 4,096 characters a call costs what it does for any string.
    for (const expression of ['size(t) > 5', 't.size() > 5']) {
      assert.equal(run(expression, '1'.repeat(4095)).meter.cost, run(expression, '12345').meter.cost, expression)
    }
    // A megabyte counted a thousand times held the thread 18 s at a cost of 4,000.
    for (const expression of ['n.all(x, size(t) > 0)', 'n.all(x, t.size() > 0)', 'n.all(x, double(t) > 0.0)', 'n.all(x, int(t) > 0)']) {
      const { error } = run(expression, '1'.repeat(1_000_000))
      assert.ok(error instanceof CostLimitExceeded, `${expression}: ${String(error)}`)
    }
    assert.equal(run('size(t)', 'a'.repeat(100_000)).meter.cost, 10_001)
  })

  it("prices find() and findAll() by the program they run when it is larger than the pattern's text, and others as upstream", () => {
    const strings = kubernetesEnvironment().registerVariable('t', 'string')
    const run = (expression: string, t: string) => meteredIn(strings, expression, { t })
    // Upstream: ceil(171 / 10) * ceil(12 * 0.25) = 54, and a name, a literal and the call's node.
    for (const call of ["t.find('[a-z]+[0-9]*')", "t.findAll('[a-z]+[0-9]*')"]) assert.equal(run(call, 'a'.repeat(170)).meter.cost, 54 + 2, call)
    // `(?:a?){500}a{500}` compiles to 1,502 instructions: 1,502 * 171 / 20 where upstream's text price is 90.
    for (const call of ["t.find('(?:a?){500}a{500}')", "t.findAll('(?:a?){500}a{500}')"]) assert.equal(run(call, 'a'.repeat(170)).meter.cost, 12_843 + 2, call)
    // matches() pays upstream's price, and its node one more (it runs in place of the library's).
    assert.equal(run("t.matches('(?:a?){500}a{500}')", 'a'.repeat(170)).meter.cost, 90 + 3)
    // In a program that cannot wait, as one that can: a megabyte read a thousand times is cancelled.
    const loops = kubernetesEnvironment().registerVariable('t', 'string').registerVariable('n', 'list<int>')
    const thousand = Array.from({ length: 1000 }, (_, i) => BigInt(i))
    for (const call of ["!t.matches('z')", "t.indexOf('z') < 0", "t.lastIndexOf('z') < 0"]) {
      const { error } = meteredIn(loops, `n.all(x, ${call})`, { t: 'a'.repeat(1_000_000), n: thousand })
      assert.ok(error instanceof CostLimitExceeded, `${call}: ${String(error)}`)
    }
  })
})

describe('where the meter applies', () => {
  it('cancels a claim mapping with the authenticator error naming the expression', () => {
    const compiled = compile('claims', bindDoubling(24, 'claims.groups'), ['bool'])
    assert.ok('program' in compiled)
    assert.throws(
      () => evaluate(compiled.program, { groups: ['a', 'b'] }),
      (err: unknown) => err instanceof CelEvaluationError && err.message.endsWith(`resulted in error: ${ACTUAL_COST_EXCEEDED}`),
    )
  })

  it('charges a policy result built by sharing one list many times as its JSON will be walked', async () => {
    let expression = 'a24'
    for (let i = 24; i >= 2; i--) expression = `cel.bind(a${i}, [a${i - 1}, a${i - 1}], ${expression})`
    expression = `cel.bind(a1, [object.metadata.name], ${expression})`
    const budget = { valuesLeft: 1000 }
    const evaluation = new PolicyEvaluation({ object: toCel({ metadata: { name: 'x' } }, budget), oldObject: null, params: null, namespaceObject: null, request: null }, 1, [])
    await assert.rejects(evaluation.evaluate(expression), new RegExp(`resulted in error: ${ACTUAL_COST_EXCEEDED}$`))
  })
})
