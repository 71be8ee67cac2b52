/** Protobuf's wire pieces written by hand, for tests that need bytes no encoder of the project would write. */

/** A varint of any signed 64-bit value: two's complement in 64 bits, seven bits a byte. */
export function varint(value: bigint | number): Buffer {
  let n = BigInt.asUintN(64, BigInt(value))
  const out: number[] = []
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80)
    n >>= 7n
  }
  out.push(Number(n))
  return Buffer.from(out)
}

/** Field `field` as length-delimited bytes (wire type 2). */
export const lengthDelimited = (field: number, bytes: Buffer): Buffer => Buffer.concat([varint(field * 8 + 2), varint(bytes.length), bytes])
