import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sameBytes } from '../../../core/machinery/same-bytes.js'
import { mustWrite } from '../../../core/storage/value/stored-values.js'

describe('sameBytes', () => {
  const bytes = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7) & 0xff)

  it('finds equal the same bytes, in separate arrays and in views at other offsets', () => {
    assert.equal(sameBytes(bytes, bytes.slice()), true)
    const wider = new Uint8Array(bytes.length + 3)
    wider.set(bytes, 3)
    assert.equal(sameBytes(wider.subarray(3), bytes), true)
    assert.equal(sameBytes(new Uint8Array(0), new Uint8Array(0)), true)
  })

  it('tells apart arrays that differ in one byte, anywhere, or in length', () => {
    for (const at of [0, 511, 1023]) {
      const other = bytes.slice()
      other[at] = other[at]! ^ 1
      assert.equal(sameBytes(bytes, other), false, `byte ${at}`)
    }
    assert.equal(sameBytes(bytes, bytes.subarray(0, 1023)), false)
  })

  it('decides whether an update is written', () => {
    const other = bytes.slice()
    other[1023] = other[1023]! ^ 1
    assert.equal(mustWrite({ plain: bytes, stale: false }, bytes.slice()), false)
    assert.equal(mustWrite({ plain: bytes, stale: false }, other), true)
    assert.equal(mustWrite({ plain: bytes, stale: true }, bytes.slice()), true, 'a value read with an old key is written again')
  })
})
