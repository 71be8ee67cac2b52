/**
 * Base64 decoded a run at a time, for a webhook's patch of megabytes: the
 * same bytes as a decode in one piece, whatever the padding and line breaks,
 * and text that is not base64 refused rather than decoded out of step.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { base64DecodeInSteps } from '../../../core/machinery/base64.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

const decode = (text: string): Uint8Array | undefined => runAtOnce(base64DecodeInSteps(text))

describe('base64 decoded in steps', () => {
  it('gives the bytes of a decode in one piece, across runs and with every padding', () => {
    for (const size of [0, 1, 2, 3, 4, 49151, 49152, 49153, 200_000]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 7919) & 0xff)
      const text = Buffer.from(bytes).toString('base64')
      assert.deepEqual(decode(text), bytes, `${size} bytes`)
      assert.deepEqual(decode(text.replace(/=+$/, '')), bytes, `${size} bytes, unpadded`)
    }
  })

  it('skips line breaks, as Go does, even where they would split a run', () => {
    const bytes = Uint8Array.from({ length: 150_000 }, (_, i) => i & 0xff)
    const text = Buffer.from(bytes).toString('base64')
    const broken = text.replace(/(.{76})/g, '$1\r\n')
    assert.deepEqual(decode(broken), bytes)
  })

  it('refuses text that is not base64, or whose padding or spaces would put later runs out of step', () => {
    const text = Buffer.alloc(100_000, 1).toString('base64')
    assert.equal(decode(`${text.slice(0, 70_000)} ${text.slice(70_000)}`), undefined)
    assert.equal(decode(`AAA=${text}`), undefined)
    assert.equal(decode('A'), undefined)
    assert.equal(decode(`${text.slice(0, 80_000)}*${text.slice(80_000)}`), undefined)
  })
})
