/**
 * The KMS v2 stored value after its prefix: upstream's EncryptedObject
 * protobuf (kmsv2/v2/api.proto): 1 encryptedData, 2 keyID,
 * 3 encryptedDEKSource, 4 annotations (map<string, bytes>),
 * 5 encryptedDEKSourceType (0 AES_GCM_KEY, 1 HKDF_SHA256_XNONCE_AES_GCM_SEED).
 * Written with fields in number order and map keys sorted; proto3 leaves a
 * zero enum out.
 */

export const DEK_SOURCE_AES_GCM_KEY = 0
export const DEK_SOURCE_HKDF_SEED = 1

export interface EncryptedObject {
  encryptedData: Uint8Array
  keyId: string
  encryptedDEKSource: Uint8Array
  annotations: Record<string, Uint8Array>
  encryptedDEKSourceType: number
}

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

function varint(out: number[], value: number): void {
  let v = value
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80)
    v = Math.floor(v / 128)
  }
  out.push(v)
}

class Writer {
  private readonly parts: Uint8Array[] = []
  tag(field: number, wire: number): void {
    const head: number[] = []
    varint(head, field * 8 + wire)
    this.parts.push(Uint8Array.from(head))
  }
  bytes(field: number, value: Uint8Array): void {
    this.tag(field, 2)
    const len: number[] = []
    varint(len, value.length)
    this.parts.push(Uint8Array.from(len), value)
  }
  varint(field: number, value: number): void {
    this.tag(field, 0)
    const v: number[] = []
    varint(v, value)
    this.parts.push(Uint8Array.from(v))
  }
  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of this.parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
}

export function encodeEncryptedObject(o: EncryptedObject): Uint8Array {
  const w = new Writer()
  if (o.encryptedData.length) w.bytes(1, o.encryptedData)
  if (o.keyId) w.bytes(2, encoder.encode(o.keyId))
  if (o.encryptedDEKSource.length) w.bytes(3, o.encryptedDEKSource)
  for (const key of Object.keys(o.annotations).sort()) {
    const entry = new Writer()
    entry.bytes(1, encoder.encode(key))
    entry.bytes(2, o.annotations[key]!)
    w.bytes(4, entry.finish())
  }
  if (o.encryptedDEKSourceType) w.varint(5, o.encryptedDEKSourceType)
  return w.finish()
}

class Reader {
  at = 0
  constructor(private readonly data: Uint8Array) {}
  get done(): boolean {
    return this.at >= this.data.length
  }
  varint(): number {
    let value = 0
    for (let shift = 1; ; shift *= 128) {
      if (this.at >= this.data.length) throw new Error('proto: unexpected EOF')
      const b = this.data[this.at++]!
      value += (b & 0x7f) * shift
      if (b < 0x80) return value
      if (shift > 2 ** 56) throw new Error('proto: integer overflow')
    }
  }
  bytes(): Uint8Array {
    const len = this.varint()
    if (this.at + len > this.data.length) throw new Error('proto: unexpected EOF')
    const out = this.data.slice(this.at, this.at + len)
    this.at += len
    return out
  }
  skip(wire: number): void {
    if (wire === 0) this.varint()
    else if (wire === 2) this.bytes()
    else if (wire === 1 || wire === 5) this.at += wire === 1 ? 8 : 4
    else throw new Error(`proto: illegal wireType ${wire}`)
    if (this.at > this.data.length) throw new Error('proto: unexpected EOF')
  }
}

function decodeEntry(data: Uint8Array): [string, Uint8Array] {
  const r = new Reader(data)
  let key = ''
  let value: Uint8Array = new Uint8Array(0)
  while (!r.done) {
    const tag = r.varint()
    if (tag === 0x0a) key = decoder.decode(r.bytes())
    else if (tag === 0x12) value = r.bytes()
    else r.skip(tag & 7)
  }
  return [key, value]
}

/** Throws on bytes that are not an EncryptedObject. */
export function decodeEncryptedObject(data: Uint8Array): EncryptedObject {
  const o: EncryptedObject = { encryptedData: new Uint8Array(0), keyId: '', encryptedDEKSource: new Uint8Array(0), annotations: {}, encryptedDEKSourceType: 0 }
  const r = new Reader(data)
  while (!r.done) {
    const tag = r.varint()
    const field = Math.floor(tag / 8)
    const wire = tag & 7
    if (field === 1 && wire === 2) o.encryptedData = r.bytes()
    else if (field === 2 && wire === 2) o.keyId = decoder.decode(r.bytes())
    else if (field === 3 && wire === 2) o.encryptedDEKSource = r.bytes()
    else if (field === 4 && wire === 2) {
      const [k, v] = decodeEntry(r.bytes())
      o.annotations[k] = v
    } else if (field === 5 && wire === 0) o.encryptedDEKSourceType = r.varint()
    else if (field === 0) throw new Error('proto: EncryptedObject: illegal tag 0')
    else r.skip(wire)
  }
  return o
}

const ANNOTATIONS_MAX_BYTES = 32 * 1024
export const KEY_ID_MAX_BYTES = 1024
const DEK_SOURCE_MAX_BYTES = 1024
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** A fully qualified domain name: at least two RFC 1123 labels, at most 253 characters. */
function isFullyQualified(name: string): boolean {
  const labels = name.split('.')
  return name.length <= 253 && labels.length >= 2 && labels.every((l) => l.length <= 63 && DNS_LABEL.test(l))
}

export function keyIdProblem(keyId: string): string | undefined {
  if (keyId.length === 0) return 'keyID is empty'
  const size = encoder.encode(keyId).length
  if (size > KEY_ID_MAX_BYTES) return `keyID is ${size} bytes, which exceeds the max size of ${KEY_ID_MAX_BYTES}`
  return undefined
}

/** Upstream's checks of an EncryptedObject, on what the plugin answered and on what is read back; worded as upstream. */
export function validateEncryptedObject(o: EncryptedObject): void {
  if (o.encryptedDEKSourceType !== DEK_SOURCE_AES_GCM_KEY && o.encryptedDEKSourceType !== DEK_SOURCE_HKDF_SEED) {
    throw new Error(`unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`)
  }
  if (o.encryptedData.length === 0) throw new Error('encrypted data is empty')
  const source = o.encryptedDEKSource.length
  if (source === 0) throw new Error('failed to validate encrypted DEK source: encrypted DEK source is empty')
  if (source > DEK_SOURCE_MAX_BYTES) {
    throw new Error(`failed to validate encrypted DEK source: encrypted DEK source is ${source} bytes, which exceeds the max size of ${DEK_SOURCE_MAX_BYTES}`)
  }
  const keyId = keyIdProblem(o.keyId)
  if (keyId) throw new Error(`failed to validate key id: ${keyId}`)
  let total = 0
  const problems: string[] = []
  for (const [k, v] of Object.entries(o.annotations)) {
    if (!isFullyQualified(k)) problems.push(`annotations: Invalid value: ${JSON.stringify(k)}: should be a domain with at least two segments separated by dots`)
    total += encoder.encode(k).length + v.length
  }
  if (total > ANNOTATIONS_MAX_BYTES) problems.push(`total size of annotations is ${total}, which exceeds the max size of ${ANNOTATIONS_MAX_BYTES}`)
  if (problems.length) throw new Error(`failed to validate annotations: ${problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`}`)
}
