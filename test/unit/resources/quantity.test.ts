import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseQuantity } from '../../../core/resources/schema/go-values.js'

const stored = (raw: string | number) => {
  const parsed = parseQuantity(raw)
  assert.ok('value' in parsed, `${raw} should parse`)
  return parsed.value
}

describe('quantities are stored in upstream’s canonical form', () => {
  const cases: [string | number, string][] = [
    ['0', '0'],
    ['0.0', '0'],
    ['0Mi', '0'],
    ['1000m', '1'],
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['100m', '100m'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['12000', '12k'],
    ['1000k', '1M'],
    ['2048Ki', '2Mi'],
    ['1536Ki', '1536Ki'],
    ['1024', '1024'],
    ['1Gi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['0.1Gi', '107374182400m'],
    ['1e3', '1e3'],
    ['1000e3', '1e6'],
    ['0.0000000001', '1n'],
    ['-0.5', '-500m'],
    ['0.07', '70m'],
    [2, '2'],
    [0.25, '250m'],
    // Texts upstream's parser already takes as canonical stay as written.
    ['1.500', '1.500'],
    ['+1', '+1'],
    ['007', '007'],
    ['12Ki', '12Ki'],
  ]
  for (const [raw, want] of cases) {
    it(`${JSON.stringify(raw)} → ${want}`, () => assert.equal(stored(raw), want))
  }

  it('gives the same canonical text however often a quantity is met, after many others, and for long texts', () => {
    for (let round = 0; round < 3; round++) {
      for (const [raw, want] of cases) assert.equal(stored(raw), want, `${JSON.stringify(raw)}, round ${round}`)
      // More different quantities than are kept: what was kept is let go, not grown without bound.
      for (let i = 0; i < 1500; i++) assert.equal(stored(`${2 * i + 1}m`), `${2 * i + 1}m`)
    }
    const long = `0.${'0'.repeat(70)}1`
    assert.equal(stored(long), '1n')
    assert.equal(stored(long), '1n')
  })

  it('still refuses what is not a quantity', () => {
    assert.deepEqual(parseQuantity('1Q'), { error: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" })
    assert.deepEqual(parseQuantity('1Ki2'), { error: "unable to parse quantity's suffix" })
  })
})

describe('a quantity with a fraction a million digits long', () => {
  it('is rounded up to a nano without making a number of its digits', () => {
    const zeros = '0'.repeat(1_000_000)
    assert.equal(stored(`0.${zeros}1`), '1n')
    assert.equal(stored(`0.${'7'.repeat(1_000_000)}`), '777777778n')
    assert.equal(stored(`1.${zeros}`), '1')
    assert.equal(stored(`0.${zeros}1Ki`), '1n')
    assert.equal(stored(`-0.${zeros}1`), '-1n')
  })

  it('keeps the digits that change the rounded value: those to the nano, and the bits of a binary suffix beyond it', () => {
    assert.equal(stored('0.0000000001Ki'), '103n')
    assert.equal(stored('0.123456789012345678Gi'), '132560717819299207n')
    assert.equal(stored('5.0000000001m'), '5000001n')
    assert.equal(stored('100.0000000000000000000000001k'), '100000000000001n')
  })
})
