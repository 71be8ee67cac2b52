/**
 * gRPC calls to one etcd member over Node's HTTP/2: unary calls (Range, Txn,
 * LeaseGrant, Compact, Status) and the bidirectional stream of a watch.
 *
 * A general gRPC client costs about twice the CPU per call of this path
 * (docs/benchmarks.md, `write-path`), and loading one with etcd's service
 * descriptions took some 60 ms and 5 MiB at every start. A unary call needs
 * a stream, one framed message each way and the status in the trailers; a
 * watch needs the frames of each direction as they come. That is all this
 * does.
 *
 * Failures come back as EtcdCallError with gRPC's status and wording: a call
 * on a member that could not be reached says "No connection established",
 * which lets the caller try the next member; a call that may have reached
 * etcd is never sent again here.
 */
import * as http2 from 'node:http2'
import type { EtcdTls } from './etcd-client.js'
import { ClientClosedError, EtcdCallError, GrpcStatus } from './etcd-grpc-status.js'

export interface MemberOptions {
  tls?: EtcdTls
  /** As the gRPC channel's keepalive: a ping after this long, the connection dropped when unanswered. */
  keepaliveMs?: number
  keepaliveTimeoutMs?: number
}

function grpcMessage(value: unknown): string {
  if (typeof value !== 'string') return ''
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/**
 * The status an answer ends with, once it has come: in the headers of a
 * trailers-only answer (every error), else in the trailers.
 */
function statusOf(stream: http2.ClientHttp2Stream): () => { code: number; details: string } | undefined {
  let status: unknown
  let message: unknown
  const take = (headers: http2.IncomingHttpHeaders) => {
    if (headers['grpc-status'] === undefined) return
    status = headers['grpc-status']
    message = headers['grpc-message']
  }
  stream.on('response', take)
  stream.on('trailers', take)
  return () => (status === undefined ? undefined : { code: Number(status), details: grpcMessage(message) })
}

/** The one gRPC message of a unary answer, from its 5-byte framed form. */
function unframe(chunks: Buffer[], length: number): Buffer {
  const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)
  if (all.length < 5) throw new Error(`answer of ${all.length} bytes has no gRPC frame`)
  if (all[0] !== 0) throw new Error('answer is compressed, which was not asked for')
  const size = all.readUInt32BE(1)
  if (all.length < 5 + size) throw new Error(`answer frame of ${size} bytes is cut short at ${all.length - 5}`)
  return all.subarray(5, 5 + size)
}

/**
 * The transport failed: worded as gRPC's clients word it, "No connection
 * established" when the member was never reached (the fault policy then
 * lets the call go to another member).
 */
function transportFailure(reached: boolean, detail: string): EtcdCallError {
  return new EtcdCallError(GrpcStatus.UNAVAILABLE, reached ? detail : `No connection established. Last error: ${detail}`)
}

/** A message with gRPC's 5-byte prefix: not compressed, its length. */
function framed(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length)
  frame[0] = 0
  frame.writeUInt32BE(message.length, 1)
  message.copy(frame, 5)
  return frame
}

const GRPC_HEADERS = (path: string): http2.OutgoingHttpHeaders => ({
  ':method': 'POST',
  ':path': path,
  'content-type': 'application/grpc',
  te: 'trailers',
})

/**
 * The messages of a stream from its chunks, as they complete. A message
 * spread over many chunks (a watch response of large objects) is joined
 * once, when its last chunk arrives.
 */
export class FrameReader {
  private chunks: Buffer[] = []
  private buffered = 0

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk)
    this.buffered += chunk.length
    const messages: Buffer[] = []
    while (this.buffered >= 5) {
      const head = this.chunks[0]!.length >= 5 ? this.chunks[0]! : this.joined()
      if (head[0] !== 0) throw new Error('a message is compressed, which was not asked for')
      const size = head.readUInt32BE(1)
      if (this.buffered < 5 + size) break
      const all = this.chunks.length === 1 ? this.chunks[0]! : this.joined()
      messages.push(all.subarray(5, 5 + size))
      const rest = all.subarray(5 + size)
      this.chunks = rest.length > 0 ? [rest] : []
      this.buffered = rest.length
    }
    return messages
  }

  private joined(): Buffer {
    const all = Buffer.concat(this.chunks, this.buffered)
    this.chunks = [all]
    return all
  }
}

export interface StreamHandlers {
  /** Each message etcd sends, in order. */
  message: (bytes: Buffer) => void
  /** Once, when etcd or the transport ends the stream (not after close()): undefined for a status of OK. */
  end: (err: EtcdCallError | undefined) => void
}

export interface CallStream {
  send: (message: Buffer) => void
  /** Cancels the stream; its handlers are not called again. */
  close: () => void
}

export class EtcdMember {
  /** `host:port`, the member's name in messages and for its circuit. */
  readonly host: string
  private session: http2.ClientHttp2Session | undefined
  private connected = false
  private keepalive: ReturnType<typeof setInterval> | undefined
  private closed = false
  /** Streams open on each session: while a session has any, it keeps the process alive. */
  private readonly streamsOn = new WeakMap<http2.ClientHttp2Session, number>()
  private readonly authority: string
  private readonly connectOptions: http2.SecureClientSessionOptions

  constructor(
    endpoint: string,
    private readonly opts: MemberOptions = {},
  ) {
    const url = new URL(endpoint)
    this.host = url.host
    this.authority = `${url.protocol}//${url.host}`
    const tls = opts.tls
    this.connectOptions = {
      // As grpc-js: the session's memory is bounded by the calls' own limits, not Node's default 10 MB.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
      ...(url.protocol === 'https:' && tls
        ? {
            ...(tls.ca ? { ca: Buffer.from(tls.ca) } : {}),
            ...(tls.cert ? { cert: Buffer.from(tls.cert) } : {}),
            ...(tls.key ? { key: Buffer.from(tls.key) } : {}),
          }
        : {}),
    }
  }

  /**
   * One call: `request` (the serialized message) to `path`, the answer's
   * message decoded by `decode`. Rejects with EtcdCallError.
   */
  call<T>(path: string, request: Buffer, deadline: number, decode: (message: Buffer) => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClientClosedError())
    const session = this.open()
    const wasConnected = this.connected
    return new Promise<T>((resolve, reject) => {
      let settled = false
      const finish = (err: Error | undefined, value?: T) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (err) reject(err)
        else resolve(value as T)
      }
      const stream = session.request(GRPC_HEADERS(path), { endStream: false })
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL)
        finish(new EtcdCallError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'))
      }, Math.max(0, deadline - Date.now()))
      const chunks: Buffer[] = []
      let length = 0
      const status = statusOf(stream)
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        length += chunk.length
      })
      stream.on('error', (err: Error) => {
        // Before the connection was up nothing was sent: the caller may go to the next member.
        const reached = wasConnected || this.connected
        finish(transportFailure(reached, err.message))
      })
      stream.on('close', () => {
        if (settled) return
        const ended = status()
        if (!ended) {
          const reached = wasConnected || this.connected
          const detail = `stream closed without a status (HTTP/2 code ${stream.rstCode ?? 'none'})`
          return finish(transportFailure(reached, detail))
        }
        if (ended.code !== GrpcStatus.OK) return finish(new EtcdCallError(ended.code, ended.details))
        let value: T
        try {
          value = decode(unframe(chunks, length))
        } catch (err) {
          return finish(new EtcdCallError(GrpcStatus.INTERNAL, `Response message parsing error: ${(err as Error).message}`))
        }
        finish(undefined, value)
      })
      stream.end(framed(request))
    })
  }

  /**
   * A bidirectional stream (a watch): `send` writes a message, each message
   * etcd sends goes to `handlers.message` in order, and `handlers.end` runs
   * once when the stream ends by etcd's doing or the transport's. Throws
   * ClientClosedError after close().
   */
  stream(path: string, handlers: StreamHandlers): CallStream {
    if (this.closed) throw new ClientClosedError()
    const session = this.open()
    const wasConnected = this.connected
    const stream = session.request(GRPC_HEADERS(path), { endStream: false })
    // An open stream keeps the process alive, as a call waiting on its deadline does; an idle connection does not.
    this.streamsOn.set(session, (this.streamsOn.get(session) ?? 0) + 1)
    session.ref()
    let done = false
    const finish = (err: EtcdCallError | undefined, notify: boolean) => {
      if (done) return
      done = true
      const left = this.streamsOn.get(session)! - 1
      this.streamsOn.set(session, left)
      if (left === 0) session.unref()
      if (notify) handlers.end(err)
    }
    const frames = new FrameReader()
    const status = statusOf(stream)
    stream.on('data', (chunk: Buffer) => {
      if (done) return
      let messages: Buffer[]
      try {
        messages = frames.push(chunk)
      } catch (err) {
        stream.close(http2.constants.NGHTTP2_CANCEL)
        return finish(new EtcdCallError(GrpcStatus.INTERNAL, `Response message parsing error: ${(err as Error).message}`), true)
      }
      for (const m of messages) {
        if (done) return
        handlers.message(m)
      }
    })
    stream.on('error', (err: Error) => {
      const reached = wasConnected || this.connected
      finish(transportFailure(reached, err.message), true)
    })
    stream.on('close', () => {
      const ended = status()
      if (!ended) return finish(new EtcdCallError(GrpcStatus.UNAVAILABLE, `stream closed without a status (HTTP/2 code ${stream.rstCode ?? 'none'})`), true)
      finish(ended.code === GrpcStatus.OK ? undefined : new EtcdCallError(ended.code, ended.details), true)
    })
    return {
      send: (request) => {
        if (!done) stream.write(framed(request))
      },
      close: () => {
        if (done) return
        finish(undefined, false)
        // Half-closed first, as gRPC's clients cancel: etcd then sees a cancelled stream, not a broken one.
        stream.end()
        stream.close(http2.constants.NGHTTP2_CANCEL)
      },
    }
  }

  /** Drops the connection; the next call opens a new one. */
  reset(): void {
    const session = this.session
    this.session = undefined
    this.connected = false
    if (this.keepalive) clearInterval(this.keepalive)
    this.keepalive = undefined
    session?.destroy()
  }

  /** No new calls; those under way finish (as a gRPC channel's close). */
  close(): void {
    this.closed = true
    const session = this.session
    this.session = undefined
    if (this.keepalive) clearInterval(this.keepalive)
    this.keepalive = undefined
    session?.close()
  }

  private open(): http2.ClientHttp2Session {
    const current = this.session
    if (current && !current.destroyed && !current.closed) return current
    this.reset()
    const session = http2.connect(this.authority, this.connectOptions)
    this.session = session
    // An idle connection does not keep the process alive (as gRPC's channels).
    session.unref()
    session.once('connect', () => {
      if (this.session === session) this.connected = true
    })
    const drop = () => {
      if (this.session === session) this.reset()
    }
    // Errors reach the calls through their streams; the session is dropped so the next call reconnects.
    session.on('error', drop)
    session.on('close', drop)
    // A member going away lets the calls it accepted finish: new calls go to a new connection.
    session.on('goaway', () => {
      if (this.session !== session) return
      this.session = undefined
      this.connected = false
      if (this.keepalive) clearInterval(this.keepalive)
      this.keepalive = undefined
    })
    this.startKeepalive(session)
    return session
  }

  private startKeepalive(session: http2.ClientHttp2Session): void {
    const every = this.opts.keepaliveMs ?? 30000
    const timeout = this.opts.keepaliveTimeoutMs ?? 10000
    if (every <= 0) return
    this.keepalive = setInterval(() => {
      if (this.session !== session || !this.connected) return
      const timer = setTimeout(() => this.session === session && this.reset(), timeout)
      timer.unref()
      const sent = session.ping(() => clearTimeout(timer))
      if (!sent) clearTimeout(timer)
    }, every)
    this.keepalive.unref()
  }
}
