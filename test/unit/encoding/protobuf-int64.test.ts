/**
 * Protobuf int64 values: the wire carries any int64 exactly, a double does
 * not. A value a double holds exactly is kept; one it would round, and
 * -2^63 (whose text form no int64 reader accepts), is refused.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Reader, WireError } from '../../../core/encoding/protobuf/wire.js'

/** A signed value as a varint: two's complement in 64 bits, seven bits a byte. */
function varint(value: bigint): Uint8Array {
  let n = BigInt.asUintN(64, value)
  const out: number[] = []
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80)
    n >>= 7n
  }
  out.push(Number(n))
  return Uint8Array.from(out)
}

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
