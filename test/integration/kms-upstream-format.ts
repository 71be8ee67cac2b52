/**
 * Upstream's KMS stored formats, written in the tests from their
 * description (not from this server's code): the EncryptedObject protobuf
 * of KMS v2 with its seeded or plain AES-GCM data, and KMS v1's
 * length-prefixed DEK. Used to open what the server wrote and to write
 * fixtures the server must read.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import { lengthDelimited, varint } from '../helpers/protobuf-wire.js'

export interface V2Object {
  encryptedData: Buffer
  keyId: string
  encryptedDEKSource: Buffer
  annotations: Record<string, Buffer>
  type: number
}

function readVarint(buf: Buffer, at: { i: number }): number {
  let v = 0
  for (let mul = 1; ; mul *= 128) {
    const b = buf[at.i++]!
    v += (b & 0x7f) * mul
    if (b < 0x80) return v
  }
}

function fields(buf: Buffer): [number, number | Buffer][] {
  const out: [number, number | Buffer][] = []
  const at = { i: 0 }
  while (at.i < buf.length) {
    const tag = readVarint(buf, at)
    if ((tag & 7) === 0) out.push([tag >> 3, readVarint(buf, at)])
    else if ((tag & 7) === 2) {
      const len = readVarint(buf, at)
      out.push([tag >> 3, buf.subarray(at.i, at.i + len)])
      at.i += len
    } else throw new Error(`unexpected wire type ${tag & 7}`)
  }
  return out
}

export function parseV2(body: Buffer): V2Object {
  const o: V2Object = { encryptedData: Buffer.alloc(0), keyId: '', encryptedDEKSource: Buffer.alloc(0), annotations: {}, type: 0 }
  for (const [n, v] of fields(body)) {
    if (n === 1) o.encryptedData = v as Buffer
    else if (n === 2) o.keyId = (v as Buffer).toString()
    else if (n === 3) o.encryptedDEKSource = v as Buffer
    else if (n === 4) {
      const entry = new Map(fields(v as Buffer))
      o.annotations[(entry.get(1) as Buffer).toString()] = (entry.get(2) as Buffer | undefined) ?? Buffer.alloc(0)
    } else if (n === 5) o.type = v as number
  }
  return o
}

export function writeV2(o: V2Object): Buffer {
  const parts = [lengthDelimited(1, o.encryptedData), lengthDelimited(2, Buffer.from(o.keyId)), lengthDelimited(3, o.encryptedDEKSource)]
  for (const [k, v] of Object.entries(o.annotations)) parts.push(lengthDelimited(4, Buffer.concat([lengthDelimited(1, Buffer.from(k)), lengthDelimited(2, v)])))
  if (o.type) parts.push(varint(5 << 3), varint(o.type))
  return Buffer.concat(parts)
}

export function gcmOpen(key: Buffer, data: Buffer, aad: string): Buffer {
  const decipher = createDecipheriv(`aes-${key.length * 8}-gcm` as 'aes-256-gcm', key, data.subarray(0, 12))
  decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(data.subarray(data.length - 16))
  return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()])
}

export function gcmSeal(key: Buffer, plain: Buffer, aad: string): Buffer {
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(aad))
  return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
}

/** HKDF-Expand (SHA-256) of one block: the seed is the pseudo-random key, the value's first 32 bytes the info. */
export const seededKey = (seed: Buffer, info: Buffer): Buffer => createHmac('sha256', seed).update(Buffer.concat([info, Buffer.from([1])])).digest()

/** The data of a seeded value (type 1): info, then AES-GCM under the derived key. */
export function seededOpen(seed: Buffer, data: Buffer, aad: string): Buffer {
  return gcmOpen(seededKey(seed, data.subarray(0, 32)), data.subarray(32), aad)
}

export function seededSeal(seed: Buffer, plain: Buffer, aad: string): Buffer {
  const info = randomBytes(32)
  return Buffer.concat([info, gcmSeal(seededKey(seed, info), plain, aad)])
}

/** KMS v1 after its prefix: 2-byte big-endian length of the encrypted DEK, the encrypted DEK, the sealed data. */
export function splitV1(body: Buffer): { encryptedDek: Buffer; data: Buffer } {
  const length = body.readUInt16BE(0)
  return { encryptedDek: body.subarray(2, 2 + length), data: body.subarray(2 + length) }
}

export function cbcSeal(key: Buffer, plain: Buffer): Buffer {
  const iv = randomBytes(16)
  const cipher = createCipheriv('aes-256-cbc', key, iv)
  return Buffer.concat([iv, cipher.update(plain), cipher.final()])
}
