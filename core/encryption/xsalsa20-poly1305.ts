/**
 * XSalsa20-Poly1305 as NaCl's secretbox defines it (the cipher of the
 * `secretbox` provider): neither Web Crypto nor the runtimes offer it, so
 * it is written here from the published algorithm (Salsa20, HSalsa20 for
 * the 24-byte nonce, Poly1305 keyed by the stream's first 32 bytes).
 * `seal` returns the tag followed by the ciphertext, as Go's
 * `secretbox.Seal` lays them out.
 */

const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]

export const SECRETBOX_NONCE_BYTES = 24
export const SECRETBOX_TAG_BYTES = 16

function rotl(v: number, c: number): number {
  return (v << c) | (v >>> (32 - c))
}

/** The 20 rounds of Salsa20 over `x`, in place. */
function rounds(x: Uint32Array): void {
  for (let i = 0; i < 20; i += 2) {
    x[4]! ^= rotl((x[0]! + x[12]!) | 0, 7)
    x[8]! ^= rotl((x[4]! + x[0]!) | 0, 9)
    x[12]! ^= rotl((x[8]! + x[4]!) | 0, 13)
    x[0]! ^= rotl((x[12]! + x[8]!) | 0, 18)
    x[9]! ^= rotl((x[5]! + x[1]!) | 0, 7)
    x[13]! ^= rotl((x[9]! + x[5]!) | 0, 9)
    x[1]! ^= rotl((x[13]! + x[9]!) | 0, 13)
    x[5]! ^= rotl((x[1]! + x[13]!) | 0, 18)
    x[14]! ^= rotl((x[10]! + x[6]!) | 0, 7)
    x[2]! ^= rotl((x[14]! + x[10]!) | 0, 9)
    x[6]! ^= rotl((x[2]! + x[14]!) | 0, 13)
    x[10]! ^= rotl((x[6]! + x[2]!) | 0, 18)
    x[3]! ^= rotl((x[15]! + x[11]!) | 0, 7)
    x[7]! ^= rotl((x[3]! + x[15]!) | 0, 9)
    x[11]! ^= rotl((x[7]! + x[3]!) | 0, 13)
    x[15]! ^= rotl((x[11]! + x[7]!) | 0, 18)
    x[1]! ^= rotl((x[0]! + x[3]!) | 0, 7)
    x[2]! ^= rotl((x[1]! + x[0]!) | 0, 9)
    x[3]! ^= rotl((x[2]! + x[1]!) | 0, 13)
    x[0]! ^= rotl((x[3]! + x[2]!) | 0, 18)
    x[6]! ^= rotl((x[5]! + x[4]!) | 0, 7)
    x[7]! ^= rotl((x[6]! + x[5]!) | 0, 9)
    x[4]! ^= rotl((x[7]! + x[6]!) | 0, 13)
    x[5]! ^= rotl((x[4]! + x[7]!) | 0, 18)
    x[11]! ^= rotl((x[10]! + x[9]!) | 0, 7)
    x[8]! ^= rotl((x[11]! + x[10]!) | 0, 9)
    x[9]! ^= rotl((x[8]! + x[11]!) | 0, 13)
    x[10]! ^= rotl((x[9]! + x[8]!) | 0, 18)
    x[12]! ^= rotl((x[15]! + x[14]!) | 0, 7)
    x[13]! ^= rotl((x[12]! + x[15]!) | 0, 9)
    x[14]! ^= rotl((x[13]! + x[12]!) | 0, 13)
    x[15]! ^= rotl((x[14]! + x[13]!) | 0, 18)
  }
}

function words(bytes: Uint8Array, offset: number, count: number): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * 4)
  return Array.from({ length: count }, (_, i) => view.getUint32(i * 4, true))
}

/** The initial state: constants, 8 key words, 4 input words (nonce and counter, or HSalsa20's 16-byte input). */
function state(key: Uint8Array, input: number[]): Uint32Array {
  const k = words(key, 0, 8)
  return Uint32Array.from([SIGMA[0]!, k[0]!, k[1]!, k[2]!, k[3]!, SIGMA[1]!, input[0]!, input[1]!, input[2]!, input[3]!, SIGMA[2]!, k[4]!, k[5]!, k[6]!, k[7]!, SIGMA[3]!])
}

/** HSalsa20: the subkey XSalsa20 derives from the key and the nonce's first 16 bytes. */
function hsalsa20(key: Uint8Array, nonce16: Uint8Array): Uint8Array {
  const x = state(key, words(nonce16, 0, 4))
  rounds(x)
  const out = new Uint8Array(32)
  const view = new DataView(out.buffer)
  ;[0, 5, 10, 15, 6, 7, 8, 9].forEach((w, i) => view.setUint32(i * 4, x[w]!, true))
  return out
}

/** XORs `length` bytes of the Salsa20 stream of (key, nonce8) into `data`, starting at stream byte 0. */
function salsa20Stream(key: Uint8Array, nonce8: Uint8Array, length: number): Uint8Array {
  const n = words(nonce8, 0, 2)
  const stream = new Uint8Array(Math.ceil(length / 64) * 64)
  const view = new DataView(stream.buffer)
  const input = state(key, [n[0]!, n[1]!, 0, 0])
  const x = new Uint32Array(16)
  for (let block = 0; block * 64 < length; block++) {
    input[8] = block >>> 0
    input[9] = Math.floor(block / 0x100000000)
    x.set(input)
    rounds(x)
    for (let i = 0; i < 16; i++) view.setUint32(block * 64 + i * 4, (x[i]! + input[i]!) >>> 0, true)
  }
  return stream.subarray(0, length)
}

const P1305 = (1n << 130n) - 5n
const MASK128 = (1n << 128n) - 1n

function leBigInt(bytes: Uint8Array): bigint {
  let v = 0n
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!)
  return v
}

/** The 16-byte Poly1305 tag of `message` under the one-time `key` (32 bytes). */
export function poly1305(key: Uint8Array, message: Uint8Array): Uint8Array {
  const r = leBigInt(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn
  const s = leBigInt(key.subarray(16, 32))
  let h = 0n
  for (let i = 0; i < message.length; i += 16) {
    const block = message.subarray(i, i + 16)
    h = ((h + leBigInt(block) + (1n << BigInt(8 * block.length))) * r) % P1305
  }
  let tag = (h + s) & MASK128
  const out = new Uint8Array(16)
  for (let i = 0; i < 16; i++) {
    out[i] = Number(tag & 0xffn)
    tag >>= 8n
  }
  return out
}

function streamFor(key: Uint8Array, nonce: Uint8Array, length: number): Uint8Array {
  if (key.length !== 32) throw new Error('secretbox keys are 32 bytes')
  if (nonce.length !== SECRETBOX_NONCE_BYTES) throw new Error('secretbox nonces are 24 bytes')
  // The first 32 bytes of the stream key Poly1305; the message is XORed with what follows.
  return salsa20Stream(hsalsa20(key, nonce.subarray(0, 16)), nonce.subarray(16, 24), 32 + length)
}

/** tag || ciphertext of `message`. */
export function secretboxSeal(key: Uint8Array, nonce: Uint8Array, message: Uint8Array): Uint8Array {
  const stream = streamFor(key, nonce, message.length)
  const out = new Uint8Array(SECRETBOX_TAG_BYTES + message.length)
  for (let i = 0; i < message.length; i++) out[SECRETBOX_TAG_BYTES + i] = message[i]! ^ stream[32 + i]!
  out.set(poly1305(stream.subarray(0, 32), out.subarray(SECRETBOX_TAG_BYTES)), 0)
  return out
}

/** The message of a sealed box, or undefined when its tag does not verify. */
export function secretboxOpen(key: Uint8Array, nonce: Uint8Array, box: Uint8Array): Uint8Array | undefined {
  if (box.length < SECRETBOX_TAG_BYTES) return undefined
  const ciphertext = box.subarray(SECRETBOX_TAG_BYTES)
  const stream = streamFor(key, nonce, ciphertext.length)
  const expected = poly1305(stream.subarray(0, 32), ciphertext)
  // Compared without an early exit, so the time taken does not tell how much of a forged tag was right.
  let diff = 0
  for (let i = 0; i < SECRETBOX_TAG_BYTES; i++) diff |= expected[i]! ^ box[i]!
  if (diff !== 0) return undefined
  const out = new Uint8Array(ciphertext.length)
  for (let i = 0; i < ciphertext.length; i++) out[i] = ciphertext[i]! ^ stream[32 + i]!
  return out
}
