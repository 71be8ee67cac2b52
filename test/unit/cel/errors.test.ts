import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compile } from '../../../core/cel/compile.js'
import { CelEvaluationError, evaluate } from '../../../core/cel/evaluate.js'

/** What a user reads when `expression` fails: the error's text after the expression's quote. */
function failure(expression: string, claims: Record<string, unknown> = {}): string {
  const compiled = compile('claims', expression, ['bool'])
  assert.ok('program' in compiled, `${expression}: ${'reason' in compiled ? compiled.reason : ''}`)
  try {
    evaluate(compiled.program, claims)
  } catch (err) {
    assert.ok(err instanceof CelEvaluationError, String(err))
    return err.detail
  }
  return assert.fail(`${expression} evaluated`)
}

describe("evaluation errors in cel-go's words", () => {
  it('refuses every int past int64 with integer overflow', () => {
    for (const expression of [
      '9223372036854775807 + 1 > 0',
      '-9223372036854775808 - 1 > 0',
      '9223372036854775807 * 2 > 0',
      '-9223372036854775808 / -1 > 0',
      '-9223372036854775808 % -1 == 0',
      '-(-9223372036854775808) > 0',
      'claims.min / claims.minusOne > 0',
      'dyn(claims.min) % dyn(claims.minusOne) == 0',
      '-claims.min > 0',
      'int(1e19) > 0',
      'int(-1e19) < 0',
      'int(9223372036854775807.0) > 0',
      'int(-9223372036854775808.0) < 0',
      "int(double('NaN')) == 0",
    ]) {
      assert.equal(failure(expression, { min: -(2 ** 63), minusOne: -1 }), 'integer overflow', expression)
    }
  })

  it('keeps the ints within range', () => {
    const compiled = compile('claims', '-9223372036854775808 / 1 == -9223372036854775808 && 7 % -1 == 0 && -7 / 2 == -3 && int(-9.2e18) < 0', ['bool'])
    assert.ok('program' in compiled)
    assert.equal(evaluate(compiled.program, {}), true)
  })

  it('words uint overflows, conversions and a modulus by zero as cel-go', () => {
    const cases: [string, string][] = [
      ['0u - 1u > 0u', 'unsigned integer overflow'],
      ['18446744073709551615u + 1u > 0u', 'unsigned integer overflow'],
      ['uint(-1) > 0u', 'unsigned integer overflow'],
      ['uint(-1.0) > 0u', 'unsigned integer overflow'],
      ['uint(1e20) > 0u', 'unsigned integer overflow'],
      ['1 % 0 == 0', 'modulus by zero'],
      ['1 / 0 == 0', 'division by zero'],
      ["int('abc') == 0", "type conversion error from 'string' to 'int'"],
      ["int('9223372036854775808') == 0", "type conversion error from 'string' to 'int'"],
      ["uint('-1') == 0u", "type conversion error from 'string' to 'uint'"],
      ["double('abc') == 0.0", "type conversion error from 'string' to 'double'"],
      ["bool('yes')", "type conversion error from 'string' to 'bool'"],
      ['int(18446744073709551615u) > 0', 'integer overflow'],
      ["claims.nope == 'x'", 'no such key: nope'],
    ]
    for (const [expression, expected] of cases) assert.equal(failure(expression), expected, expression)
  })

  it('converts a uint and a duration to int, as cel-go does', () => {
    const compiled = compile('claims', "int(1u) == 1 && int(9223372036854775807u) == 9223372036854775807 && int(duration('1.5s')) == 1500000000 && int(dyn(2u)) == 2", ['bool'])
    assert.ok('program' in compiled, 'reason' in compiled ? compiled.reason : '')
    assert.equal(evaluate(compiled.program, {}), true)
  })

  it('lets an overflow be absorbed as any error is', () => {
    const compiled = compile('claims', '[1, 2].all(x, -9223372036854775808 / -1 > 0) || true', ['bool'])
    assert.ok('program' in compiled)
    assert.equal(evaluate(compiled.program, {}), true)
  })
})
