import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type Parsed,
  parseBool,
  parseDuration,
  parseFloat64,
  parseInt32,
  parseInt64,
  parseLevel,
  parseQuantity,
} from '../../../../core/options/flags/values.js'

/** Runs a parser over [input, expected value] and [input, expected reason] tables. */
function check<T>(parse: (text: string) => Parsed<T>, good: [string, T][], bad: [string, string][]): void {
  for (const [input, value] of good) assert.deepEqual(parse(input), { value }, input)
  for (const [input, reason] of bad) assert.deepEqual(parse(input), { reason }, input)
}

describe('scalar flag values', () => {
  it('reads booleans with the spellings of Go strconv.ParseBool', () => {
    check(
      parseBool,
      [
        ['true', true],
        ['1', true],
        ['t', true],
        ['T', true],
        ['TRUE', true],
        ['True', true],
        ['false', false],
        ['0', false],
        ['f', false],
        ['F', false],
        ['FALSE', false],
        ['False', false],
      ],
      [
        ['yes', 'must be a boolean (true or false)'],
        ['', 'must be a boolean (true or false)'],
        ['tRuE', 'must be a boolean (true or false)'],
      ],
    )
  })

  it('reads integers as pflag does, with Go base prefixes, within 32 bits', () => {
    check(
      parseInt32,
      [
        ['6443', 6443],
        ['-7', -7],
        ['+5', 5],
        ['0', 0],
        ['0x1f', 31],
        ['0o17', 15],
        ['017', 15],
        ['0b101', 5],
        ['1_000', 1000],
        ['2147483647', 2147483647],
        ['-2147483648', -2147483648],
      ],
      [
        ['https', 'must be an integer'],
        ['1.5', 'must be an integer'],
        ['', 'must be an integer'],
        ['08', 'must be an integer'],
        ['1__0', 'must be an integer'],
        ['2147483648', 'value out of range'],
        ['-2147483649', 'value out of range'],
      ],
    )
  })

  it('reads 64-bit integers up to what a JavaScript number holds exactly', () => {
    check(
      parseInt64,
      [
        ['10485760', 10485760],
        ['9007199254740991', 9007199254740991],
      ],
      [
        ['9007199254740992', 'value out of range'],
        ['ten', 'must be an integer'],
      ],
    )
  })

  it('reads the log verbosity as a decimal unsigned 32-bit number', () => {
    check(
      parseLevel,
      [
        ['0', 0],
        ['4', 4],
        ['4294967295', 4294967295],
      ],
      [
        ['-1', 'must be a non-negative integer'],
        ['0x2', 'must be a non-negative integer'],
        ['4294967296', 'value out of range'],
      ],
    )
  })

  it('reads finite decimal numbers', () => {
    check(
      parseFloat64,
      [
        ['0.001', 0.001],
        ['.5', 0.5],
        ['10', 10],
        ['1e-3', 0.001],
        ['-2.5E2', -250],
      ],
      [
        ['NaN', 'must be a number'],
        ['Inf', 'must be a number'],
        ['1/50', 'must be a number'],
        ['1e999', 'value out of range'],
      ],
    )
  })

  it('reads Go durations as milliseconds', () => {
    check(
      parseDuration,
      [
        ['300ms', 300],
        ['1m30s', 90_000],
        ['1h0m0s', 3_600_000],
        ['0', 0],
        ['-1s', -1000],
      ],
      [
        ['60', 'time: invalid duration "60" (use Go syntax like 1m0s, 30s, 500ms)'],
        ['1d', 'time: invalid duration "1d" (use Go syntax like 1m0s, 30s, 500ms)'],
        ['', 'time: invalid duration "" (use Go syntax like 1m0s, 30s, 500ms)'],
      ],
    )
  })

  it('reads byte quantities in decimal and binary multiples, rounding up to whole bytes', () => {
    const garbage = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkMGTP]*[-+]?[0-9]*)$'"
    check(
      parseQuantity,
      [
        ['0', 0],
        ['512', 512],
        ['1K', 1000],
        ['1k', 1000],
        ['2Ki', 2048],
        ['3M', 3_000_000],
        ['4G', 4_000_000_000],
        ['5Mi', 5 * 1024 * 1024],
        ['6Gi', 6 * 1024 ** 3],
        ['1.5Ki', 1536],
        ['1e3', 1000],
        ['1m', 1],
      ],
      [
        ['lots', garbage],
        ['1KB', garbage],
        ['1 Mi', garbage],
        ['', garbage],
        ['-1Ki', 'must not be negative'],
      ],
    )
  })
})
