/**
 * HPACK (RFC 7541) as an HTTP/2 client to etcd needs it: a full decoder for
 * the header blocks a server sends (its dynamic table, Huffman-coded
 * strings, table size updates), and an encoder for the few request headers
 * a gRPC call has, written as literals that never touch a dynamic table.
 *
 * Go's HPACK encoder indexes what it sends and Huffman-codes a string when
 * that is shorter, so after the first answer a gRPC status costs etcd a
 * byte or two per header: the decoder must keep its table exactly as the
 * server's encoder does, for every block, even one of a stream already
 * given up.
 */

export class HpackError extends Error {}

/** RFC 7541 Appendix A, index 1 upward. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
]

/**
 * The bit length of each symbol's Huffman code (RFC 7541 Appendix B),
 * bytes 0 to 255 and EOS last. The code is canonical: the codes themselves
 * follow from the lengths (shorter first, then by symbol), so only these
 * are written down.
 */
const HUFFMAN_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22,
  23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22,
  21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26,
  27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26,
  26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
]
const EOS = 256

/**
 * The decoding trie, two slots per node: a slot holds the child node's
 * index, or a leaf as -(symbol + 1). Built once, on the first coded string.
 */
let huffmanTrie: Int32Array | undefined

function buildTrie(): Int32Array {
  const symbols = HUFFMAN_LENGTHS.map((_, symbol) => symbol).sort((a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b)
  const trie = new Int32Array(2 * 2 * symbols.length)
  let nodes = 1
  let code = 0
  let previousLength = HUFFMAN_LENGTHS[symbols[0]!]!
  symbols.forEach((symbol, i) => {
    const length = HUFFMAN_LENGTHS[symbol]!
    if (i > 0) code = (code + 1) * 2 ** (length - previousLength)
    previousLength = length
    let node = 0
    for (let bit = length - 1; bit > 0; bit--) {
      const slot = 2 * node + (Math.floor(code / 2 ** bit) & 1)
      if (trie[slot] === 0) trie[slot] = nodes++
      node = trie[slot]!
    }
    trie[2 * node + (code & 1)] = -(symbol + 1)
  })
  return trie
}

function huffmanDecode(bytes: Uint8Array): string {
  const trie = (huffmanTrie ??= buildTrie())
  let out = ''
  let node = 0
  // Bits read since the last symbol, and whether they were all ones: what is left at the end is padding.
  let pending = 0
  let allOnes = true
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >> bit) & 1
      const next = trie[2 * node + one]!
      pending++
      allOnes &&= one === 1
      if (next < 0) {
        const symbol = -next - 1
        if (symbol === EOS) throw new HpackError('a Huffman-coded string holds EOS')
        out += String.fromCharCode(symbol)
        node = 0
        pending = 0
        allOnes = true
      } else if (next === 0) {
        throw new HpackError('a Huffman-coded string holds no valid code')
      } else {
        node = next
      }
    }
  }
  if (pending > 7 || !allOnes) throw new HpackError('a Huffman-coded string ends in padding other than EOS')
  return out
}

/** The cursor over a block being decoded. */
interface Cursor {
  bytes: Uint8Array
  at: number
}

function readInteger(c: Cursor, prefixBits: number): number {
  if (c.at >= c.bytes.length) throw new HpackError('a header block ends inside an integer')
  const max = (1 << prefixBits) - 1
  let value = c.bytes[c.at++]! & max
  if (value < max) return value
  let shift = 0
  for (;;) {
    if (c.at >= c.bytes.length) throw new HpackError('a header block ends inside an integer')
    const byte = c.bytes[c.at++]!
    value += (byte & 0x7f) * 2 ** shift
    shift += 7
    if (value > 0xffffffff) throw new HpackError('an integer in a header block is too large')
    if ((byte & 0x80) === 0) return value
  }
}

function readString(c: Cursor): string {
  if (c.at >= c.bytes.length) throw new HpackError('a header block ends inside a string')
  const huffman = (c.bytes[c.at]! & 0x80) !== 0
  const length = readInteger(c, 7)
  if (c.at + length > c.bytes.length) throw new HpackError('a string runs past the end of its header block')
  const raw = c.bytes.subarray(c.at, c.at + length)
  c.at += length
  return huffman ? huffmanDecode(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1')
}

/** A table entry's size by RFC 7541 4.1: its octets and 32 more. Strings here are Latin-1, one octet a character. */
const entrySize = (name: string, value: string) => name.length + value.length + 32

export class HpackDecoder {
  /** Newest first, as dynamic indexes count. */
  private readonly table: Array<readonly [string, string]> = []
  private size = 0
  private maxSize: number

  /** `limit`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4096 unless it said otherwise). */
  constructor(private readonly limit = 4096) {
    this.maxSize = limit
  }

  /** Each field of a header block, in order, to `field`. Throws HpackError: the connection cannot go on. */
  decode(block: Uint8Array, field: (name: string, value: string) => void): void {
    const c: Cursor = { bytes: block, at: 0 }
    let fieldsSeen = false
    while (c.at < block.length) {
      const first = block[c.at]!
      if (first & 0x80) {
        const [name, value] = this.entry(readInteger(c, 7))
        field(name, value)
      } else if (first & 0x40) {
        const name = this.nameAt(c, 6)
        const value = readString(c)
        this.insert(name, value)
        field(name, value)
      } else if (first & 0x20) {
        // A size update is only allowed before the block's first field.
        if (fieldsSeen) throw new HpackError('a dynamic table size update comes after a header field')
        const size = readInteger(c, 5)
        if (size > this.limit) throw new HpackError(`a dynamic table size update to ${size} exceeds the ${this.limit} allowed`)
        this.maxSize = size
        this.evictTo(size)
        continue
      } else {
        // Without indexing (0000) or never indexed (0001): the table is untouched.
        const name = this.nameAt(c, 4)
        field(name, readString(c))
      }
      fieldsSeen = true
    }
  }

  private nameAt(c: Cursor, prefixBits: number): string {
    const index = readInteger(c, prefixBits)
    return index === 0 ? readString(c) : this.entry(index)[0]
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('a header field refers to index 0')
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!
    const entry = this.table[index - STATIC_TABLE.length - 1]
    if (!entry) throw new HpackError(`a header field refers to index ${index}, past the dynamic table`)
    return entry
  }

  private insert(name: string, value: string): void {
    const size = entrySize(name, value)
    // An entry larger than the table empties it and is not added (RFC 7541 4.4).
    this.evictTo(this.maxSize - size)
    if (size > this.maxSize) return
    this.table.unshift([name, value])
    this.size += size
  }

  private evictTo(size: number): void {
    while (this.size > Math.max(0, size) && this.table.length > 0) {
      const [name, value] = this.table.pop()!
      this.size -= entrySize(name, value)
    }
  }
}

function writeInteger(out: number[], value: number, prefixBits: number, firstBits: number): void {
  const max = (1 << prefixBits) - 1
  if (value < max) {
    out.push(firstBits | value)
    return
  }
  out.push(firstBits | max)
  let rest = value - max
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
}

function writeString(out: number[], text: string): void {
  const bytes = Buffer.from(text, 'latin1')
  writeInteger(out, bytes.length, 7, 0)
  for (const b of bytes) out.push(b)
}

/**
 * A request's header block, each field a literal without indexing (a
 * static table name where there is one, no Huffman coding): the server's
 * decoder keeps no state for it, so the same bytes serve every call to
 * the same path.
 */
export function encodeRequestHeaders(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const out: number[] = []
  for (const [name, value] of fields) {
    const exact = STATIC_TABLE.findIndex(([n, v]) => n === name && v === value && v !== '')
    if (exact >= 0) {
      writeInteger(out, exact + 1, 7, 0x80)
      continue
    }
    const named = STATIC_TABLE.findIndex(([n]) => n === name)
    if (named >= 0) {
      writeInteger(out, named + 1, 4, 0)
    } else {
      out.push(0)
      writeString(out, name)
    }
    writeString(out, value)
  }
  return Buffer.from(out)
}
