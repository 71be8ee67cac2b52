import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { parseQuantity } from '../../../core/cel/library/quantity.js'
import { CostMeter, PER_CALL_LIMIT, runMetered } from '../../../core/cel/meter.js'

/** The value parseQuantity gives `text`, as `numerator/10^scale`. */
function valueOf(text: string): string {
  const q = parseQuantity(text)
  assert.ok(q, `${text} parses`)
  return `${q.numerator}/10^${q.scale}`
}

describe('quantity parsing rounds to nanos as resource.ParseQuantity does', () => {
  const cases: [string, string][] = [
    // Non-zero amounts finer than a nano round up to one, away from zero for negative ones.
    ['0.0000000001', '1/10^9'],
    ['-0.0000000001', '-1/10^9'],
    ['1e-10', '1/10^9'],
    ['0.1n', '1/10^9'],
    ['0.0000000015', '2/10^9'],
    ['-0.0000000015', '-2/10^9'],
    ['123456789.0000000001', '123456789000000001/10^9'],
    // A binary suffix multiplies first: 1e-10 Ki is 102.4n, 1e-12 Mi is 1048.576n.
    ['0.0000000001Ki', '103/10^9'],
    ['-0.000000000001Mi', '-1049/10^9'],
    // Values within nano precision are kept exactly.
    ['1.5', '15/10^1'],
    ['5m', '5/10^3'],
    ['0.000000001', '1/10^9'],
    ['0.5Ki', '5120/10^1'],
    ['0.000', '0/10^3'],
  ]
  for (const [text, want] of cases) {
    it(`${text} is ${want}`, () => assert.equal(valueOf(text), want))
  }

  it('rounds exactly whatever the suffix and however many digits are dropped', () => {
    const bits: Record<string, number> = { '': 0, Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 }
    for (const [suffix, power] of Object.entries(bits)) {
      for (const fraction of ['000000000000000000000000000000000000000000000000000000000000000000000001', '99999999999999999999', '1234567890123456789012345678901234567890123456789012345678901234567890123']) {
        const q = parseQuantity(`7.${fraction}${suffix}`)
        assert.ok(q)
        // q >= the exact value, and less than one nano above it.
        const exact = BigInt(`7${fraction}`) << BigInt(power)
        const ours = q.numerator * 10n ** BigInt(fraction.length - q.scale)
        assert.ok(ours >= exact && ours - exact < 10n ** BigInt(fraction.length - 9), `7.${fraction}${suffix}`)
      }
    }
  })

  it('keeps a fraction a million digits long cheap in every operation', () => {
    const env = kubernetesEnvironment().registerVariable('s', 'string')
    const outcome = parseAndCheck(env, 'cel.bind(q, quantity(s), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].all(i, !q.isInteger() && q.add(i + 1) != q && q.compareTo(q.sub(1)) == 1))')
    assert.ok('parsed' in outcome)
    const result = runMetered(outcome.parsed, { s: `0.${'0'.repeat(1_000_000)}1` }, new CostMeter(PER_CALL_LIMIT))
    assert.equal(result, true)
  })
})
