/**
 * A minimal SPDY/3.1 session for the test node agent (the server itself
 * passes SPDY through untouched): control frames SYN_STREAM, SYN_REPLY,
 * RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS and WINDOW_UPDATE, DATA frames
 * with FIN, and header blocks compressed with one zlib stream per direction
 * primed with the SPDY/3 dictionary, each block ending at a sync flush.
 * Streams carry only the headers Kubernetes puts on them (streamtype, port,
 * requestid): no HTTP pseudo-headers are expected. Enough to serve kubectl's
 * port-forward, and checked against kubectl itself.
 */
import type { Duplex } from 'node:stream'
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib'

/** The SPDY/3 header dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): length-prefixed words, then a text tail. */
function spdy3Dictionary(): Buffer {
  const words = [
    'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
    'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
    'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
    'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
    'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
    'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
    'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
  ]
  const tail =
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
    '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
    'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
    'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,' +
    'publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.'
  const parts: Buffer[] = []
  for (const word of words) {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(word.length)
    parts.push(len, Buffer.from(word, 'latin1'))
  }
  parts.push(Buffer.from(tail, 'latin1'))
  return Buffer.concat(parts)
}

export const SPDY3_DICTIONARY = spdy3Dictionary()

const VERSION = 3
export const FLAG_FIN = 0x01
const TYPE = { SYN_STREAM: 1, SYN_REPLY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, HEADERS: 8, WINDOW_UPDATE: 9 } as const

/** Passes a buffer through a zlib stream and takes what a sync flush yields. */
function flushed(z: Deflate | Inflate, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = []
    const collect = (c: Buffer): number => out.push(c)
    z.on('data', collect)
    z.once('error', reject)
    z.write(input)
    z.flush(constants.Z_SYNC_FLUSH, () => {
      // Let the flushed output be emitted before it is taken.
      setImmediate(() => {
        z.off('data', collect)
        z.off('error', reject)
        resolve(Buffer.concat(out))
      })
    })
  })
}

export interface SpdyStream {
  id: number
  headers: Map<string, string>
  /** Bytes the peer sent on this stream. */
  onData: (data: Buffer) => void
  /** The peer half-closed (FIN) or reset the stream. */
  onEnd: () => void
}

/** The server side of one SPDY/3.1 connection. */
export class SpdySession {
  private pending = Buffer.alloc(0)
  private work: Promise<void> = Promise.resolve()
  private readonly inflate = createInflate({ dictionary: SPDY3_DICTIONARY })
  private readonly deflate = createDeflate({ dictionary: SPDY3_DICTIONARY })
  private readonly streams = new Map<number, SpdyStream>()

  constructor(
    private readonly socket: Duplex,
    private readonly onStream: (stream: SpdyStream, session: SpdySession) => void,
  ) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('close', () => this.closeAll())
    socket.on('error', () => this.closeAll())
  }

  private closeAll(): void {
    for (const stream of this.streams.values()) stream.onEnd()
    this.streams.clear()
    this.inflate.close()
    this.deflate.close()
  }

  /** Takes bytes read from the connection (the ones that came with the upgrade, too). */
  receive(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk])
    while (this.pending.length >= 8) {
      const length = this.pending.readUIntBE(5, 3)
      if (this.pending.length < 8 + length) break
      const frame = this.pending.subarray(0, 8 + length)
      this.pending = this.pending.subarray(8 + length)
      // Header blocks share one zlib stream: frames are handled strictly in order.
      this.work = this.work
        .then(() => this.handle(frame))
        .catch(() => {
          this.socket.destroy()
        })
    }
  }

  private async handle(frame: Buffer): Promise<void> {
    const flags = frame[4]!
    const payload = frame.subarray(8)
    if ((frame[0]! & 0x80) === 0) {
      const stream = this.streams.get(frame.readUInt32BE(0) & 0x7fffffff)
      if (!stream) return
      if (payload.length) stream.onData(Buffer.from(payload))
      if (flags & FLAG_FIN) stream.onEnd()
      return
    }
    const type = frame.readUInt16BE(2)
    if (type === TYPE.SYN_STREAM) {
      const id = payload.readUInt32BE(0) & 0x7fffffff
      const headers = await this.readHeaders(payload.subarray(10))
      const stream: SpdyStream = { id, headers, onData: () => {}, onEnd: () => {} }
      this.streams.set(id, stream)
      this.onStream(stream, this)
      if (flags & FLAG_FIN) stream.onEnd()
    } else if (type === TYPE.HEADERS) {
      await this.readHeaders(payload.subarray(4))
    } else if (type === TYPE.RST_STREAM) {
      const id = payload.readUInt32BE(0) & 0x7fffffff
      this.streams.get(id)?.onEnd()
      this.streams.delete(id)
    } else if (type === TYPE.PING) {
      this.socket.write(frame)
    } else if (type === TYPE.GOAWAY) {
      this.socket.end()
    }
    // SETTINGS and WINDOW_UPDATE: this session neither limits nor waits.
  }

  private async readHeaders(block: Buffer): Promise<Map<string, string>> {
    const raw = await flushed(this.inflate, block)
    const headers = new Map<string, string>()
    let at = 4
    for (let i = 0, n = raw.readUInt32BE(0); i < n; i++) {
      const nameLength = raw.readUInt32BE(at)
      const name = raw.subarray(at + 4, at + 4 + nameLength).toString('latin1')
      at += 4 + nameLength
      const valueLength = raw.readUInt32BE(at)
      headers.set(name.toLowerCase(), raw.subarray(at + 4, at + 4 + valueLength).toString('latin1'))
      at += 4 + valueLength
    }
    return headers
  }

  private control(type: number, flags: number, payload: Buffer): Buffer {
    const head = Buffer.alloc(8)
    head.writeUInt16BE(0x8000 | VERSION, 0)
    head.writeUInt16BE(type, 2)
    head.writeUInt8(flags, 4)
    head.writeUIntBE(payload.length, 5, 3)
    return Buffer.concat([head, payload])
  }

  /** Accepts a stream the peer opened (SYN_REPLY with no headers). */
  reply(stream: SpdyStream): Promise<void> {
    this.work = this.work.then(async () => {
      const block = await flushed(this.deflate, Buffer.from([0, 0, 0, 0]))
      const id = Buffer.alloc(4)
      id.writeUInt32BE(stream.id)
      this.socket.write(this.control(TYPE.SYN_REPLY, 0, Buffer.concat([id, block])))
    })
    return this.work
  }

  /** Sends bytes on a stream, FIN with the last ones; writes wait for the socket to drain. */
  send(stream: SpdyStream, data: Buffer, fin = false): boolean {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(stream.id & 0x7fffffff, 0)
    head.writeUInt8(fin ? FLAG_FIN : 0, 4)
    head.writeUIntBE(data.length, 5, 3)
    return this.socket.write(Buffer.concat([head, data]))
  }

  /** Resolves when the socket can take more. */
  drained(): Promise<void> {
    return new Promise((resolve) => this.socket.once('drain', () => resolve()))
  }
}
