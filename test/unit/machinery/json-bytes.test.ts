import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { runAtOnce, runInSlices } from '../../../core/machinery/time-slice.js'
import { jsonBytes } from '../../../core/machinery/json-bytes.js'

const utf8 = new TextEncoder()
const written = (value: unknown): number => utf8.encode(JSON.stringify(value)).byteLength

describe('the JSON size of a patch copy, counted without writing the text', () => {
  it('equals the UTF-8 length of JSON.stringify for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assert.equal(runAtOnce(jsonBytes(value)), written(value))
      }),
      { numRuns: 500, seed: 14 },
    )
  })

  it('counts escapes, control characters, pairs and lone surrogates as JSON.stringify writes them', () => {
    for (const s of ['"\\\b\f\n\r\t', '\u0001\u001f\u007f', 'é€😀', '\ud800x\udc00', '\udc00\ud800', 'plain']) {
      assert.equal(runAtOnce(jsonBytes({ [s]: [s, 1.5e300, -0, true, null] })), written({ [s]: [s, 1.5e300, -0, true, null] }), JSON.stringify(s))
    }
  })

  it('measures megabytes of string and a hundred thousand nodes in slices to the same count', async () => {
    const value = { big: `${'é'.repeat(1 << 20)}x`, many: Array.from({ length: 100_000 }, (_, i) => ({ i })) }
    assert.equal(await runInSlices(jsonBytes(value)), written(value))
  })
})
