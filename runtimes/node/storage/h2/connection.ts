/**
 * The client side of one HTTP/2 connection (RFC 9113), as a gRPC client to
 * etcd uses it: streams opened with a header block, data both ways under
 * flow control, the answer's header blocks and data handed on as they
 * come, pings, and the server's SETTINGS and GOAWAY obeyed. No server
 * push, priorities or request trailers: gRPC asks none of them.
 *
 * Node's own HTTP/2 client costs some 70 µs of the thread per call once
 * compiled (165 µs before), an object graph, header validation and an
 * async resource per stream: a tenth of a create's CPU on etcd and more of
 * a start's. The frames a call needs are few and small, so they are built
 * and read here, written with one cork per turn of the event loop.
 */
import * as net from 'node:net'
import * as tls from 'node:tls'
import { HpackDecoder, HpackError } from './hpack.js'

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')

const DATA = 0x0
const HEADERS = 0x1
const RST_STREAM = 0x3
const SETTINGS = 0x4
const PUSH_PROMISE = 0x5
const PING = 0x6
const GOAWAY = 0x7
const WINDOW_UPDATE = 0x8
const CONTINUATION = 0x9

const END_STREAM = 0x1
const ACK = 0x1
const END_HEADERS = 0x4
const PADDED = 0x8
const PRIORITY = 0x20

const SETTINGS_HEADER_TABLE_SIZE = 0x1
const SETTINGS_ENABLE_PUSH = 0x2
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4
const SETTINGS_MAX_FRAME_SIZE = 0x5

const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  FLOW_CONTROL_ERROR: 0x3,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
} as const

const MAX_WINDOW = 2 ** 31 - 1
const MAX_STREAM_ID = 2 ** 31 - 1
/** Frames up to 16 KiB each way: the protocol's default, which Go's servers keep to. */
const MAX_FRAME = 16384
/**
 * What a stream may receive before its reader says so again. The reader
 * takes every frame as it comes, so the window only bounds what the
 * server sends ahead: one window update per 4 MiB read, not per frame.
 */
const STREAM_WINDOW = 8 * 1024 * 1024
const CONNECTION_WINDOW = MAX_WINDOW

export interface StreamEnd {
  /** Why the stream ended without the server finishing it. */
  message: string
  /** Whether the server may have acted on the request (false: it certainly did not). */
  reached: boolean
  /** The HTTP/2 error code of a reset, when the server sent one. */
  code?: number
}

export interface StreamEvents {
  /** Each field of a header block the server sends: the answer's headers, then its trailers. */
  header: (name: string, value: string) => void
  /** The answer's data, as it comes. */
  data: (chunk: Buffer) => void
  /** Once: `undefined` when the server ended the stream, else why it ended. */
  end: (failure: StreamEnd | undefined) => void
}

export interface ClientStream {
  /** Sends `data`; `endStream` half-closes this side. Kept in order, under flow control. */
  write: (data: Buffer, endStream: boolean) => void
  /** Resets the stream (CANCEL); its events are not called again. */
  cancel: () => void
}

interface StreamState {
  id: number
  events: StreamEvents
  headerBlock: Buffer
  /** What waits for the flow-control windows, in order. */
  queued: Array<{ data: Buffer; end: boolean }>
  sendWindow: number
  /** Bytes received since the last window update sent for this stream. */
  unacknowledged: number
  localEnded: boolean
  done: boolean
}

export interface ConnectionOptions {
  /** `http:` (HTTP/2 over TCP) or `https:` (over TLS, negotiated by ALPN). */
  url: URL
  /** PEM: the CA bundle that signed the server's certificate (else the system's roots), a client certificate and key. */
  tls?: { ca?: string | Uint8Array; cert?: string | Uint8Array; key?: string | Uint8Array }
}

export class ClientConnection {
  /** Whether the transport was ever established: a failure after that may have reached the server. */
  connected = false
  /** Whether new streams may open here: false once the connection failed, was closed or told to go away. */
  get usable(): boolean {
    return !this.failed && !this.draining && this.nextId <= MAX_STREAM_ID
  }

  private readonly socket: net.Socket
  private readonly streams = new Map<number, StreamState>()
  /** Streams waiting for the server's limit of concurrent streams. */
  private readonly waiting: StreamState[] = []
  private readonly blocked = new Set<StreamState>()
  private readonly decoder = new HpackDecoder()
  private readonly pings = new Map<string, () => void>()
  private readonly closeListeners: Array<() => void> = []
  private nextId = 1
  private pingCount = 0
  private failed: StreamEnd | undefined
  private draining = false
  private corked = false

  private peerMaxStreams = Infinity
  private peerInitialWindow = 65535
  private peerMaxFrame = MAX_FRAME
  private sendWindow = 65535
  private unacknowledged = 0

  /** Unread bytes of a frame that spans socket reads. */
  private pending: Buffer | undefined
  /** A header block waiting for its CONTINUATION frames. */
  private continuing: { id: number; endStream: boolean; parts: Buffer[] } | undefined

  constructor(opts: ConnectionOptions) {
    const host = opts.url.hostname.replace(/^\[(.*)\]$/, '$1')
    const port = Number(opts.url.port || (opts.url.protocol === 'https:' ? 443 : 80))
    if (opts.url.protocol === 'https:') {
      this.socket = tls.connect({
        host,
        port,
        ALPNProtocols: ['h2'],
        ...(net.isIP(host) ? {} : { servername: host }),
        ...(opts.tls?.ca ? { ca: Buffer.from(opts.tls.ca) } : {}),
        ...(opts.tls?.cert ? { cert: Buffer.from(opts.tls.cert) } : {}),
        ...(opts.tls?.key ? { key: Buffer.from(opts.tls.key) } : {}),
      })
      this.socket.once('secureConnect', () => (this.connected = true))
    } else {
      this.socket = net.connect({ host, port })
      this.socket.once('connect', () => (this.connected = true))
    }
    this.socket.setNoDelay(true)
    // An idle connection does not keep the process alive; see ref().
    this.socket.unref()
    this.socket.on('data', (chunk: Buffer) => this.read(chunk))
    this.socket.on('error', (err) => this.fail(err.message))
    this.socket.on('close', () => this.fail('the connection closed'))
    const settings = Buffer.alloc(6 * 3)
    settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, 0)
    settings.writeUInt32BE(0, 2)
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6)
    settings.writeUInt32BE(STREAM_WINDOW, 8)
    settings.writeUInt16BE(SETTINGS_HEADER_TABLE_SIZE, 12)
    settings.writeUInt32BE(4096, 14)
    const windowUpdate = Buffer.alloc(4)
    windowUpdate.writeUInt32BE(CONNECTION_WINDOW - 65535, 0)
    this.send(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, settings), frame(WINDOW_UPDATE, 0, 0, windowUpdate)]))
  }

  /**
   * Opens a stream: `headerBlock` is the request's HPACK-encoded headers,
   * `body` (with END_STREAM) follows at once when given. On a connection
   * no longer `usable` the stream ends at once, not sent.
   */
  request(headerBlock: Buffer, body: Buffer | undefined, events: StreamEvents): ClientStream {
    const state: StreamState = {
      id: 0,
      events,
      headerBlock,
      queued: body ? [{ data: body, end: true }] : [],
      sendWindow: 0,
      unacknowledged: 0,
      localEnded: body !== undefined,
      done: false,
    }
    if (!this.usable) {
      // Nothing is sent on a connection that failed or is going away: the call may go elsewhere.
      const failure = this.failed ?? { message: 'the connection is going away', reached: false }
      queueMicrotask(() => this.end(state, failure))
    } else if (this.streams.size >= this.peerMaxStreams) {
      this.waiting.push(state)
    } else {
      this.open(state)
    }
    return {
      write: (data, endStream) => {
        if (state.done || state.localEnded) return
        state.localEnded = endStream
        state.queued.push({ data, end: endStream })
        if (state.id !== 0) this.flushStream(state)
      },
      cancel: () => {
        if (state.done) return
        state.done = true
        const at = this.waiting.indexOf(state)
        if (at >= 0) this.waiting.splice(at, 1)
        if (state.id !== 0 && this.streams.has(state.id)) {
          this.send(rstStream(state.id, ErrorCode.CANCEL))
          this.forget(state)
        }
      },
    }
  }

  /** Sends a PING; `answered` runs when the server acknowledges it. */
  ping(answered: () => void): void {
    const payload = Buffer.alloc(8)
    payload.writeUInt32BE(++this.pingCount, 4)
    this.pings.set(payload.toString('hex'), answered)
    this.send(frame(PING, 0, 0, payload))
  }

  /** While any caller holds a reference, the open socket keeps the process alive. */
  ref(): void {
    this.socket.ref()
  }

  unref(): void {
    this.socket.unref()
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener)
  }

  /** No new streams; the connection ends once those open have (as a graceful GOAWAY). */
  close(): void {
    this.draining = true
    this.endIfIdle()
  }

  /** Ends the connection now: open streams fail with `reason`. */
  destroy(reason = 'the connection was reset'): void {
    this.fail(reason)
  }

  private open(state: StreamState): void {
    state.id = this.nextId
    this.nextId += 2
    state.sendWindow = this.peerInitialWindow
    this.streams.set(state.id, state)
    this.send(headersFrames(state.id, state.headerBlock, state.queued.length === 0 && state.localEnded, this.peerMaxFrame))
    this.flushStream(state)
  }

  private flushStream(state: StreamState): void {
    while (state.queued.length > 0 && !state.done) {
      const next = state.queued[0]!
      const size = Math.min(next.data.length, state.sendWindow, this.sendWindow, this.peerMaxFrame)
      if (size <= 0 && next.data.length > 0) {
        this.blocked.add(state)
        return
      }
      const whole = size === next.data.length
      const flags = whole && next.end ? END_STREAM : 0
      this.send(frame(DATA, flags, state.id, whole ? next.data : next.data.subarray(0, size)))
      state.sendWindow -= size
      this.sendWindow -= size
      if (whole) state.queued.shift()
      else next.data = next.data.subarray(size)
    }
    this.blocked.delete(state)
  }

  private flushBlocked(): void {
    for (const state of [...this.blocked]) {
      if (this.sendWindow <= 0) return
      this.flushStream(state)
    }
  }

  /**
   * Writes go out together once per turn of the event loop (setImmediate,
   * after the I/O callbacks of the turn have run): the calls that many
   * requests made in one turn are one write to the socket. Each write is a
   * system call that also runs etcd's side of the loopback; flushing at the
   * end of each tick instead made one per call under load: some 30% more
   * CPU per create on etcd (docs/benchmarks.md).
   */
  private send(bytes: Buffer): void {
    if (this.failed) return
    if (!this.corked) {
      this.corked = true
      this.socket.cork()
      setImmediate(() => {
        this.corked = false
        this.socket.uncork()
      })
    }
    this.socket.write(bytes)
  }

  private read(chunk: Buffer): void {
    const bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk
    this.pending = undefined
    try {
      let at = 0
      while (bytes.length - at >= 9) {
        const length = bytes.readUIntBE(at, 3)
        if (length > MAX_FRAME) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `a frame of ${length} bytes exceeds the ${MAX_FRAME} allowed`)
        if (bytes.length - at < 9 + length) break
        const type = bytes[at + 3]!
        const flags = bytes[at + 4]!
        const id = bytes.readUInt32BE(at + 5) & MAX_STREAM_ID
        const payload = bytes.subarray(at + 9, at + 9 + length)
        at += 9 + length
        this.onFrame(type, flags, id, payload)
        if (this.failed) return
      }
      if (at < bytes.length) this.pending = bytes.subarray(at)
    } catch (err) {
      if (!(err instanceof ConnectionError) && !(err instanceof HpackError)) throw err
      const code = err instanceof ConnectionError ? err.code : ErrorCode.COMPRESSION_ERROR
      this.fail(`HTTP/2 protocol error from the server: ${err.message}`, goaway(this.nextId - 2, code))
    }
  }

  private onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.continuing && type !== CONTINUATION) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a header block was interrupted')
    switch (type) {
      case DATA:
        return this.onData(flags, id, payload)
      case HEADERS:
        return this.onHeaders(flags, id, payload)
      case CONTINUATION: {
        if (!this.continuing || this.continuing.id !== id) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a CONTINUATION frame without its header block')
        this.continuing.parts.push(payload)
        if (flags & END_HEADERS) {
          const { endStream, parts } = this.continuing
          this.continuing = undefined
          this.headerBlock(id, endStream, Buffer.concat(parts))
        }
        return
      }
      case RST_STREAM: {
        if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM is not 4 bytes')
        const state = this.streams.get(id)
        if (!state) return
        const code = payload.readUInt32BE(0)
        // A refused stream was never processed: the call may go elsewhere.
        this.end(state, { message: `stream closed without a status (HTTP/2 code ${code})`, reached: code !== ErrorCode.REFUSED_STREAM, code })
        return
      }
      case SETTINGS:
        return this.onSettings(flags, id, payload)
      case PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE when push is disabled')
      case PING: {
        if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING is not 8 bytes')
        if (flags & ACK) {
          const key = payload.toString('hex')
          const answered = this.pings.get(key)
          this.pings.delete(key)
          answered?.()
        } else {
          this.send(frame(PING, ACK, 0, Buffer.from(payload)))
        }
        return
      }
      case GOAWAY:
        return this.onGoaway(payload)
      case WINDOW_UPDATE:
        return this.onWindowUpdate(id, payload)
      default:
        // PRIORITY and unknown frame types are ignored, as the protocol says.
        return
    }
  }

  private onData(flags: number, id: number, payload: Buffer): void {
    // Every DATA frame counts against the connection's window, even one for a stream given up.
    this.unacknowledged += payload.length
    if (this.unacknowledged >= CONNECTION_WINDOW / 2) {
      this.send(windowUpdate(0, this.unacknowledged))
      this.unacknowledged = 0
    }
    const state = this.streams.get(id)
    if (!state) return
    let data = payload
    if (flags & PADDED) {
      const padding = payload[0] ?? 0
      if (padding + 1 > payload.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding longer than its frame')
      data = payload.subarray(1, payload.length - padding)
    }
    state.unacknowledged += payload.length
    if (state.unacknowledged >= STREAM_WINDOW / 2 && !(flags & END_STREAM)) {
      this.send(windowUpdate(id, state.unacknowledged))
      state.unacknowledged = 0
    }
    if (data.length > 0) state.events.data(data)
    if (flags & END_STREAM && !state.done) this.end(state, undefined)
  }

  private onHeaders(flags: number, id: number, payload: Buffer): void {
    let block = payload
    if (flags & PADDED) {
      const padding = payload[0] ?? 0
      if (padding + 1 > payload.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding longer than its frame')
      block = payload.subarray(1, payload.length - padding)
    }
    if (flags & PRIORITY) block = block.subarray(5)
    const endStream = (flags & END_STREAM) !== 0
    if (flags & END_HEADERS) this.headerBlock(id, endStream, block)
    else this.continuing = { id, endStream, parts: [Buffer.from(block)] }
  }

  private headerBlock(id: number, endStream: boolean, block: Buffer): void {
    const state = this.streams.get(id)
    // Decoded whether or not the stream is still wanted: the table must follow the server's.
    if (!state || state.done) {
      this.decoder.decode(block, () => {})
      return
    }
    this.decoder.decode(block, state.events.header)
    if (endStream && !state.done) this.end(state, undefined)
  }

  private onSettings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream')
    if (flags & ACK) return
    if (payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS of a length not a multiple of 6')
    for (let at = 0; at < payload.length; at += 6) {
      const key = payload.readUInt16BE(at)
      const value = payload.readUInt32BE(at + 2)
      if (key === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'an initial window over 2^31-1')
        const delta = value - this.peerInitialWindow
        this.peerInitialWindow = value
        for (const state of this.streams.values()) state.sendWindow += delta
      } else if (key === SETTINGS_MAX_FRAME_SIZE) {
        if (value < MAX_FRAME || value > 2 ** 24 - 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `a maximum frame size of ${value}`)
        this.peerMaxFrame = value
      } else if (key === SETTINGS_MAX_CONCURRENT_STREAMS) {
        this.peerMaxStreams = value
      }
      // The server's header table size bounds an encoder's table; the requests here use none.
    }
    this.send(frame(SETTINGS, ACK, 0, Buffer.alloc(0)))
    this.flushBlocked()
    this.openWaiting()
  }

  private onGoaway(payload: Buffer): void {
    if (payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY shorter than 8 bytes')
    const lastId = payload.readUInt32BE(0) & MAX_STREAM_ID
    const code = payload.readUInt32BE(4)
    this.draining = true
    // Streams after the last one the server took were not processed: they may go elsewhere.
    for (const state of [...this.streams.values()]) {
      if (state.id > lastId) this.end(state, { message: `the server is going away (HTTP/2 code ${code}) and did not take this call`, reached: false })
    }
    for (const state of this.waiting.splice(0)) this.end(state, { message: 'the server is going away', reached: false })
    this.endIfIdle()
  }

  private onWindowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE is not 4 bytes')
    const increment = payload.readUInt32BE(0) & MAX_WINDOW
    if (id === 0) {
      if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a window update of 0')
      this.sendWindow += increment
      if (this.sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'the connection window past 2^31-1')
      this.flushBlocked()
      return
    }
    const state = this.streams.get(id)
    if (!state) return
    state.sendWindow += increment
    if (increment === 0 || state.sendWindow > MAX_WINDOW) {
      this.send(rstStream(id, increment === 0 ? ErrorCode.PROTOCOL_ERROR : ErrorCode.FLOW_CONTROL_ERROR))
      this.end(state, { message: 'the server broke flow control on this stream', reached: true })
      return
    }
    this.flushStream(state)
  }

  /** The stream is over: its events learn how, once. */
  private end(state: StreamState, failure: StreamEnd | undefined): void {
    const wasDone = state.done
    state.done = true
    this.forget(state)
    if (!wasDone) state.events.end(failure)
  }

  private forget(state: StreamState): void {
    this.streams.delete(state.id)
    this.blocked.delete(state)
    this.openWaiting()
    this.endIfIdle()
  }

  private openWaiting(): void {
    while (this.waiting.length > 0 && this.streams.size < this.peerMaxStreams && this.usable) this.open(this.waiting.shift()!)
  }

  private endIfIdle(): void {
    if (!this.draining || this.failed || this.streams.size > 0 || this.waiting.length > 0) return
    this.send(goaway(0, ErrorCode.NO_ERROR))
    this.failed = { message: 'the connection was closed', reached: false }
    this.socket.end()
    this.notifyClosed()
  }

  /** Ends the connection: open streams fail with `message`; `lastFrame` (a GOAWAY saying why) goes out first. */
  private fail(message: string, lastFrame?: Buffer): void {
    if (this.failed) return
    this.failed = { message, reached: this.connected }
    // end() writes what is corked and the last frame, then the socket goes; destroy() alone would drop them.
    if (lastFrame) this.socket.end(lastFrame, () => this.socket.destroy())
    else this.socket.destroy()
    const failure = this.failed
    for (const state of [...this.streams.values(), ...this.waiting.splice(0)]) this.end(state, failure)
    this.pings.clear()
    this.notifyClosed()
  }

  private notifyClosed(): void {
    for (const listener of this.closeListeners.splice(0)) listener()
  }
}

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

function frame(type: number, flags: number, id: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length)
  out.writeUIntBE(payload.length, 0, 3)
  out[3] = type
  out[4] = flags
  out.writeUInt32BE(id, 5)
  payload.copy(out, 9)
  return out
}

function headersFrames(id: number, block: Buffer, endStream: boolean, maxFrame: number): Buffer {
  const first = block.subarray(0, maxFrame)
  const flags = (endStream ? END_STREAM : 0) | (first.length === block.length ? END_HEADERS : 0)
  const frames = [frame(HEADERS, flags, id, first)]
  for (let at = first.length; at < block.length; at += maxFrame) {
    const part = block.subarray(at, at + maxFrame)
    frames.push(frame(CONTINUATION, at + part.length === block.length ? END_HEADERS : 0, id, part))
  }
  return frames.length === 1 ? frames[0]! : Buffer.concat(frames)
}

function rstStream(id: number, code: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(code, 0)
  return frame(RST_STREAM, 0, id, payload)
}

function windowUpdate(id: number, increment: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(increment, 0)
  return frame(WINDOW_UPDATE, 0, id, payload)
}

function goaway(lastId: number, code: number): Buffer {
  const payload = Buffer.alloc(8)
  payload.writeUInt32BE(Math.max(0, lastId), 0)
  payload.writeUInt32BE(code, 4)
  return frame(GOAWAY, 0, 0, payload)
}
