/**
 * Protobuf int64 values: the wire carries any int64 exactly, a double does
 * not. A value a double holds exactly is kept; one it would round, and
 * -2^63 (whose text form no int64 reader accepts), is refused.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Reader, WireError } from '../../../core/encoding/protobuf/wire.js'
import { varint } from '../../helpers/protobuf-wire.js'

const read = (value: bigint): number => new Reader(varint(value)).int64()

describe('protobuf int64', () => {
  it('keeps every value a double holds exactly', () => {
    for (const v of [0n, 1n, -1n, 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, 2n ** 62n, -(2n ** 62n), 2n ** 63n - 1024n]) {
      assert.equal(read(v), Number(v), String(v))
    }
  })

  it('refuses values a double would round, and -2^63', () => {
    for (const v of [2n ** 53n + 1n, -(2n ** 53n + 1n), 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 63n) + 1n]) {
      assert.throws(() => read(v), (err: unknown) => err instanceof WireError && err.message === `int64 value ${v} cannot be stored exactly`, String(v))
    }
  })
})
