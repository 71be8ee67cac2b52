/**
 * The stepped matcher runs re2js's own program: its answers must be
 * re2js's, for every kind of instruction (classes, folding, assertions,
 * repetition, code points past 0xFFFF), and its work is what it counts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RE2JS } from 're2js'
import { canStep, steppedTest } from '../../../core/regex/stepped-match.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

const PATTERNS = [
  '^[ab]*a[ab]{3}$', 'a', '^a', 'a$', '^$', '\\bfoo\\b', '(?i)HeLLo', '(?m)^x$', '[^\\n]+z', '.*', 'x*', '(a|b)*c',
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '\\Bo', 'é+', '😀+', '(?s).a', '^(a+)+$', '\\Aab\\z', '(?m)b$', '(?U)a+?b', '[[:alpha:]]{2}',
]
const INPUTS = ['', 'a', 'ab', 'ba', 'aab', 'foo bar', 'xfoo', 'HELLO', 'y\nx\nz', 'abc', 'aaaab', 'abba', 'my-host', '-bad', 'café', 'x😀😀', 'b\na', 'ab\n', 'a\nb\n']

describe('the stepped matcher', () => {
  it("answers as re2js's test for every pattern and input of the table", () => {
    const counter = { charge() {} }
    for (const pattern of PATTERNS) {
      const compiled = RE2JS.compile(pattern)
      assert.ok(canStep(compiled), pattern)
      for (const input of INPUTS) assert.equal(runAtOnce(steppedTest(compiled, input, counter)), compiled.test(input), `${pattern} over ${JSON.stringify(input)}`)
    }
  })

  it('counts the threads it steps: a handful a character for a class, hundreds for a pattern that keeps them all live', () => {
    const count = (pattern: string, input: string) => {
      let units = 0
      runAtOnce(steppedTest(RE2JS.compile(pattern), input, { charge: (n) => void (units += n) }))
      return units
    }
    assert.ok(count('^[a-z]*$', 'a'.repeat(10_000)) < 100_000)
    assert.ok(count('^[ab]*a[ab]{300}$', 'a'.repeat(10_000) + 'b'.repeat(301)) > 2_000_000)
  })
})
