import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compile } from '../../../core/cel/compile.js'
import { CelEvaluationError, evaluate } from '../../../core/cel/evaluate.js'
import { formatString } from '../../../core/cel/library/string-format.js'

/** The value of a string expression, or the error a user reads. */
function formatted(expression: string): string {
  const compiled = compile('claims', expression, ['string'])
  assert.ok('program' in compiled, `${expression}: ${'reason' in compiled ? compiled.reason : ''}`)
  try {
    return evaluate(compiled.program, {}) as string
  } catch (err) {
    assert.ok(err instanceof CelEvaluationError, String(err))
    return `error: ${err.detail}`
  }
}

describe("format() as cel-go's strings extension writes it", () => {
  it('writes %s of a double as Go %g, and uints, durations and types by value', () => {
    const cases: [string, string][] = [
      ["'%s'.format([1000000.0])", '1e+06'],
      ["'%s'.format([123456.0])", '123456'],
      ["'%s'.format([1234567.5])", '1.2345675e+06'],
      ["'%s'.format([0.0001])", '0.0001'],
      ["'%s'.format([0.00001])", '1e-05'],
      ["'%s'.format([1.0])", '1'],
      ["'%s'.format([double('-Infinity')])", '-Inf'],
      ["'%s'.format([2u])", '2'],
      ["'%s'.format([duration('1h')])", '3600s'],
      ["'%s'.format([duration('1.5s')])", '1.5s'],
      ["'%s'.format([timestamp('2024-01-01T00:00:00.500Z')])", '2024-01-01T00:00:00.5Z'],
      ["'%s'.format([type(1)])", 'int'],
      ["'%s'.format([null])", 'null'],
    ]
    for (const [expression, expected] of cases) assert.equal(formatted(expression), expected, expression)
  })

  it('writes the elements of a list or a map as CEL literals, a map sorted by key', () => {
    const list = [1.5, 'a"b\n', new TextEncoder().encode('x'), Number.NaN, null, true, 3n, ['c']]
    assert.equal(formatString('%s', [list]), '[1.500000, "a\\"b\\n", b"x", "NaN", null, true, 3, ["c"]]')
    assert.equal(formatString('%s', [new Map<unknown, unknown>([['b', 1n], ['a', [2.0]]])]), '{"a":[2.000000], "b":1}')
    assert.equal(formatString('%s', [new Map<unknown, unknown>([[2n, 'x'], [1n, 'y']])]), '{1:"y", 2:"x"}')
    assert.equal(formatString('%s', [{ b: 'x', a: 'y' }]), '{"a":"y", "b":"x"}')
  })

  it('takes bools for %b and bytes for %x', () => {
    assert.equal(formatted("'%b %b %b'.format([true, false, 5])"), '1 0 101')
    assert.equal(formatted("'%x|%X'.format([b'\\x00\\xff', b'\\xab'])"), '00ff|AB')
  })

  it("refuses a verb that does not fit its argument in cel-go's words", () => {
    const cases: [string, string][] = [
      ["'%d'.format([dyn(1.5)])", 'decimal clause can only be used on integers, was given double'],
      ["'%f'.format([dyn(1)])", 'fixed-point clause can only be used on doubles, was given int'],
      ["'%e'.format([dyn('x')])", 'scientific clause can only be used on doubles, was given string'],
      ["'%o'.format([dyn(1.5)])", 'octal clause can only be used on integers, was given double'],
      ["'%b'.format([dyn('x')])", 'only integers and bools can be formatted as binary, was given string'],
      ["'%x'.format([dyn(1.5)])", 'only integers, byte buffers, and strings can be formatted as hex, was given double'],
      ["'%d'.format([dyn(true)])", 'decimal clause can only be used on integers, was given bool'],
      ["'%s'.format([optional.of(1)])", 'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type'],
    ]
    for (const [expression, detail] of cases) assert.equal(formatted(expression), `error: error during formatting: ${detail}`, expression)
    assert.equal(formatted("'a %'.format([1])"), 'error: unexpected end of string')
    assert.equal(formatted("'%s %s'.format([1])"), 'error: index 1 out of range')
    assert.equal(formatted("'%f'.format(['NaN'])"), 'NaN')
  })
})

describe("string() as cel-go's standard library converts", () => {
  it('writes a double as Go %g, and converts timestamps, durations and UTF-8 bytes', () => {
    const cases: [string, string][] = [
      ['string(1000000.0)', '1e+06'],
      ['string(123456789.0)', '1.23456789e+08'],
      ['string(1.5e-7)', '1.5e-07'],
      ['string(-0.0)', '-0'],
      ['string(2.5)', '2.5'],
      ["string(double('Infinity'))", '+Inf'],
      ['string(1u)', '1'],
      ['string(-7)', '-7'],
      ['string(true)', 'true'],
      ["string(b'abc')", 'abc'],
      ["string(timestamp('2024-01-01T00:00:00.250Z'))", '2024-01-01T00:00:00.25Z'],
      ["string(duration('1h1.5s'))", '3601.5s'],
      ["string(dyn(0.1))", '0.1'],
      ["string(dyn(ip('1.2.3.4'))) + string(cidr('10.0.0.0/8'))", '1.2.3.410.0.0.0/8'],
      ["string(b'\\xff')", 'error: invalid UTF-8 in bytes, cannot convert to string'],
    ]
    for (const [expression, expected] of cases) assert.equal(formatted(expression), expected, expression)
  })

  it('refuses a value it has no conversion for when checked', () => {
    const compiled = compile('claims', 'string([1]) == "[1]"', ['bool'])
    assert.ok('reason' in compiled)
    assert.match(compiled.reason, /found no matching overload for 'string' applied to '\(list\(int\)\)'/)
  })
})
