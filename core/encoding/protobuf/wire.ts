/**
 * The protobuf wire format: the "k8s\0" prefix, varints, length-delimited
 * fields, and a Reader and Writer over them. Nothing here knows the type table.
 */

import { isStackOverflow } from '../../machinery/limits.js'

export const PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00)

export const VARINT = 0
export const FIXED64 = 1
export const LEN = 2
export const FIXED32 = 5
const TWO_32 = 4294967296
/** A varint's high half below this makes a non-negative value below 2^53. */
const SAFE_HIGH_BITS = 0x200000

export const utf8 = new TextEncoder()
export const utf8Strict = new TextDecoder('utf-8', { fatal: true })

/** A malformed body is the client's fault: always a 400, never a 500. */
export class WireError extends Error {}

export function hasMagic(body: Uint8Array): boolean {
  return body.length >= 4 && PROTOBUF_MAGIC.every((b, i) => body[i] === b)
}

/** Strings longer than this are written by the UTF-8 encoder at once rather than a character at a time. */
const LONG_STRING = 24

/** Strings up to this many bytes are checked for ASCII and built directly. */
const SHORT_STRING = 64

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8Strict.decode(bytes)
  } catch (err) {
    // A stack that overflows inside the decoder is the nesting's fault, reported as such by the caller.
    if (err instanceof WireError || isStackOverflow(err)) throw err
    throw new WireError('string is not valid UTF-8')
  }
}

export class Reader {
  pos = 0
  /**
   * Where the message being read ends: the buffer's end, or a nested
   * message's while it is read in place (`enter`/`leave`), so that nothing
   * of it is read past its own length.
   */
  end: number
  constructor(private readonly buf: Uint8Array) {
    this.end = buf.length
  }

  eof(): boolean {
    return this.pos >= this.end
  }

  /** A varint as its low and high 32-bit halves. */
  varint64(): [number, number] {
    let lo = 0
    let hi = 0
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint')
      const b = this.buf[this.pos++]!
      if (i < 4) lo |= (b & 0x7f) << (7 * i)
      else if (i === 4) {
        lo |= (b & 0x7f) << 28
        hi |= (b & 0x7f) >>> 4
      } else hi |= (b & 0x7f) << (7 * i - 32)
      if (b < 0x80) return [lo >>> 0, hi >>> 0]
    }
    throw new WireError('varint longer than 10 bytes')
  }

  /** Lengths and tags: must fit comfortably in a JS number. */
  uint(): number {
    // Nearly every tag and length fits in four bytes (below 2^28): read those without the pair of halves.
    const buf = this.buf
    let pos = this.pos
    let n = 0
    for (let shift = 0; shift < 28 && pos < this.end; shift += 7) {
      const b = buf[pos++]!
      n |= (b & 0x7f) << shift
      if (b < 0x80) {
        this.pos = pos
        return n
      }
    }
    return this.wideUint()
  }

  private wideUint(): number {
    const [lo, hi] = this.varint64()
    if (hi > 0x1fffff) throw new WireError('varint out of range')
    return hi * TWO_32 + lo
  }

  /**
   * A signed 64-bit varint. Upstream keeps any int64 exactly; values here are
   * doubles, so one a double cannot hold (most beyond 2^53) is refused rather
   * than stored rounded (2^63 - 1 would become 2^63, which no int64 reader
   * accepts back). -2^63 is exact but refused too: written back as text it is
   * -9223372036854776000, out of int64's range. Every value a double holds
   * exactly is kept, the same bound as a JSON body's (json-decoding.ts).
   */
  int64(): number {
    const [lo, hi] = this.varint64()
    // Below 2^53, the common case: exact without a BigInt.
    if (hi < SAFE_HIGH_BITS) return hi * TWO_32 + lo
    const exact = BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo))
    const n = Number(exact)
    if (BigInt(n) !== exact || n === -(2 ** 63)) throw new WireError(`int64 value ${exact} cannot be stored exactly`)
    return n
  }

  int32(): number {
    return this.varint64()[0] | 0
  }

  /** A length, checked against what is left of the message being read. */
  private length(): number {
    const n = this.uint()
    if (n > this.end - this.pos) throw new WireError(`length ${n} runs past the end of the message`)
    return n
  }

  bytes(): Uint8Array {
    const n = this.length()
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  string(): string {
    const n = this.length()
    const buf = this.buf
    const start = this.pos
    this.pos += n
    // Short ASCII (names, keys, most values) is valid UTF-8 as it is: built without the decoder's call.
    if (n <= SHORT_STRING) {
      let i = start
      while (i < start + n && buf[i]! < 0x80) i++
      if (i === start + n) {
        // One flat string (not one piece per character: the watch cache keeps these).
        return String.fromCharCode.apply(null, buf.subarray(start, start + n) as unknown as number[])
      }
    }
    return decodeUtf8(buf.subarray(start, start + n))
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new WireError('truncated fixed64')
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true)
    this.pos += 8
    return v
  }

  tag(): [field: number, wire: number] {
    const t = this.key()
    return [keyField(t), t & 7]
  }

  /** A field's key: its number times eight plus its wire type (`keyField`, `& 7`), without a pair made per field. */
  key(): number {
    const t = this.uint()
    if (t < 8) throw new WireError('field number 0')
    return t
  }

  /**
   * Reads a length-delimited field's length and reads on inside it: the
   * message ends there until `leave`, given what this returned, goes back to
   * the message around it (read to its end by then). A nested message is so
   * read in place, without a view of its bytes and a reader of its own.
   */
  enter(): number {
    const n = this.length()
    const outer = this.end
    this.end = this.pos + n
    return outer
  }

  leave(outer: number): void {
    this.pos = this.end
    this.end = outer
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint64()
    else if (wire === LEN) {
      const n = this.length()
      this.pos += n
    }
    else if (wire === FIXED64 || wire === FIXED32) {
      const n = wire === FIXED64 ? 8 : 4
      if (this.pos + n > this.end) throw new WireError('truncated fixed-width field')
      this.pos += n
    } else throw new WireError(`unsupported wire type ${wire}`)
  }
}

/** The field number of a key `Reader.key` read. */
export const keyField = (key: number): number => (key > 0xffffffff ? Math.floor(key / 8) : key >>> 3)

/** How many bytes `n` (not negative) takes as a varint. */
function varintSize(n: number): number {
  let size = 1
  while (n >= 0x80) {
    n = Math.floor(n / 0x80)
    size++
  }
  return size
}

export class Writer {
  private buf: Uint8Array
  private len = 0

  /** `capacity`: the bytes first set aside; small for the many small messages (a map entry, a Time). */
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity)
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n))
    next.set(this.buf.subarray(0, this.len))
    this.buf = next
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length)
    this.buf.set(bytes, this.len)
    this.len += bytes.length
  }

  /** Any integer; negatives take ten bytes (two's complement), as int32/int64 do on the wire. */
  varint(n: number): void {
    this.room(10)
    if (n < 0) {
      let u = BigInt.asUintN(64, BigInt(n))
      while (u >= 0x80n) {
        this.buf[this.len++] = Number(u & 0x7fn) | 0x80
        u >>= 7n
      }
      this.buf[this.len++] = Number(u)
      return
    }
    while (n >= 0x80) {
      this.buf[this.len++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.len++] = n
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }

  lenDelimited(field: number, bytes: Uint8Array): void {
    this.tag(field, LEN)
    this.varint(bytes.length)
    this.raw(bytes)
  }

  /**
   * Starts a length-delimited field whose bytes are written in place after
   * it; `end(mark)` closes it. One byte is set aside for the length, which
   * fits most fields (names, keys, small messages); a longer field's bytes
   * move on by the length's further bytes when it ends, once, so a message
   * is written into one buffer instead of a buffer per nested message copied
   * into its parent.
   */
  begin(field: number): number {
    this.tag(field, LEN)
    this.room(1)
    return this.len++
  }

  /** Closes the field `begin` returned `mark` for: its length, in as few bytes as a varint takes (as upstream writes it). */
  end(mark: number): void {
    let size = this.len - mark - 1
    if (size < 0x80) {
      this.buf[mark] = size
      return
    }
    const extra = varintSize(size) - 1
    this.room(extra)
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.len)
    this.len += extra
    let at = mark
    while (size >= 0x80) {
      this.buf[at++] = (size % 0x80) | 0x80
      size = Math.floor(size / 0x80)
    }
    this.buf[at] = size
  }

  /** `end(mark)`, and a copy of the field's bytes (its tag and length left out), to be written again with lenDelimited. */
  endKeeping(mark: number): Uint8Array {
    const size = this.len - mark - 1
    this.end(mark)
    return this.buf.slice(this.len - size, this.len)
  }

  /** A string field, its UTF-8 written in place: a short one's ASCII byte by byte, a long one and any other text by the encoder. */
  string(field: number, text: string): void {
    const mark = this.begin(field)
    if (text.length > LONG_STRING) {
      // A UTF-16 unit takes at most three bytes of UTF-8 (a surrogate pair four for its two).
      this.room(text.length * 3)
      this.len += utf8.encodeInto(text, this.buf.subarray(this.len)).written
      this.end(mark)
      return
    }
    this.room(text.length)
    const buf = this.buf
    let at = this.len
    let i = 0
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code >= 0x80) break
      buf[at++] = code
    }
    this.len = at
    if (i < text.length) {
      const rest = text.length - i
      // A UTF-16 unit takes at most three bytes of UTF-8 (a surrogate pair four for its two).
      this.room(rest * 3)
      this.len += utf8.encodeInto(i === 0 ? text : text.slice(i), this.buf.subarray(this.len)).written
    }
    this.end(mark)
  }

  double(field: number, v: number): void {
    this.tag(field, FIXED64)
    this.room(8)
    new DataView(this.buf.buffer, this.len, 8).setFloat64(0, v, true)
    this.len += 8
  }

  /**
   * Empties the writer to be used again, keeping its buffer unless it grew
   * past `keepUpTo` bytes (one large object's buffer is not held for good).
   */
  reset(keepUpTo: number): void {
    this.len = 0
    if (this.buf.length > keepUpTo) this.buf = new Uint8Array(keepUpTo)
  }

  /** The bytes written, as a copy of their own. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.len)
  }

  /** The bytes written, without a copy: for a message copied at once into the one around it. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.len)
  }
}
