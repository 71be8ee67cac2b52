/**
 * gRPC calls to one etcd member over HTTP/2: unary calls (Range, Txn,
 * LeaseGrant, Compact, Status) and the bidirectional stream of a watch.
 *
 * A general gRPC client costs about twice the CPU per call of this path
 * (docs/benchmarks.md, `write-path`), and loading one with etcd's service
 * descriptions took some 60 ms and 5 MiB at every start. A unary call needs
 * a stream, one framed message each way and the status in the trailers; a
 * watch needs the frames of each direction as they come. That is all this
 * does, on the HTTP/2 connection of `h2/connection.ts`.
 *
 * Failures come back as EtcdCallError with gRPC's status and wording: a call
 * on a member that could not be reached says "No connection established",
 * which lets the caller try the next member; a call that may have reached
 * etcd is never sent again here.
 */
import type { EtcdTls } from './etcd-client.js'
import { ClientClosedError, EtcdCallError, GrpcStatus } from './etcd-grpc-status.js'
import { ClientConnection, type StreamEnd } from './h2/connection.js'
import { encodeRequestHeaders } from './h2/hpack.js'

export interface MemberOptions {
  tls?: EtcdTls
  /** As the gRPC channel's keepalive: a ping after this long, the connection dropped when unanswered. */
  keepaliveMs?: number
  keepaliveTimeoutMs?: number
}

function grpcMessage(value: string | undefined): string {
  if (value === undefined) return ''
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
class GrpcStatusReader {
  private status: string | undefined
  private message: string | undefined

  /** A field of the answer's headers or trailers. */
  readonly header = (name: string, value: string): void => {
    if (name === 'grpc-status') this.status = value
    else if (name === 'grpc-message') this.message = value
  }

  ended(): { code: number; details: string } | undefined {
    return this.status === undefined ? undefined : { code: Number(this.status), details: grpcMessage(this.message) }
  }
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
function transportFailure({ reached, message }: StreamEnd): EtcdCallError {
  return new EtcdCallError(GrpcStatus.UNAVAILABLE, reached ? message : `No connection established. Last error: ${message}`)
}

/** A message with gRPC's 5-byte prefix: not compressed, its length. */
function framed(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length)
  frame[0] = 0
  frame.writeUInt32BE(message.length, 1)
  message.copy(frame, 5)
  return frame
}

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
  private connection: ClientConnection | undefined
  private keepalive: ReturnType<typeof setInterval> | undefined
  private closed = false
  /** Streams open on each connection: while a connection has any, it keeps the process alive. */
  private readonly streamsOn = new WeakMap<ClientConnection, number>()
  private readonly url: URL
  /** Each path's request headers, encoded once: they never change. */
  private readonly headerBlocks = new Map<string, Buffer>()

  constructor(
    endpoint: string,
    private readonly opts: MemberOptions = {},
  ) {
    this.url = new URL(endpoint)
    this.host = this.url.host
  }

  /**
   * One call: `request` (the serialized message) to `path`, the answer's
   * message decoded by `decode`. Rejects with EtcdCallError.
   */
  call<T>(path: string, request: Buffer, deadline: number, decode: (message: Buffer) => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClientClosedError())
    const connection = this.open()
    return new Promise<T>((resolve, reject) => {
      let settled = false
      const finish = (err: Error | undefined, value?: T) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (err) reject(err)
        else resolve(value as T)
      }
      const chunks: Buffer[] = []
      let length = 0
      const status = new GrpcStatusReader()
      const stream = connection.request(this.headersFor(path), framed(request), {
        header: status.header,
        data: (chunk) => {
          chunks.push(chunk)
          length += chunk.length
        },
        end: (failure) => {
          if (failure) return finish(transportFailure(failure))
          const ended = status.ended()
          if (!ended) return finish(transportFailure({ message: 'stream closed without a status', reached: true }))
          if (ended.code !== GrpcStatus.OK) return finish(new EtcdCallError(ended.code, ended.details))
          let value: T
          try {
            value = decode(unframe(chunks, length))
          } catch (err) {
            return finish(new EtcdCallError(GrpcStatus.INTERNAL, `Response message parsing error: ${(err as Error).message}`))
          }
          finish(undefined, value)
        },
      })
      const timer = setTimeout(
        () => {
          stream.cancel()
          finish(new EtcdCallError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'))
        },
        Math.max(0, deadline - Date.now()),
      )
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
    const connection = this.open()
    // An open stream keeps the process alive, as a call waiting on its deadline does; an idle connection does not.
    this.streamsOn.set(connection, (this.streamsOn.get(connection) ?? 0) + 1)
    connection.ref()
    let done = false
    const finish = (err: EtcdCallError | undefined, notify: boolean) => {
      if (done) return
      done = true
      const left = this.streamsOn.get(connection)! - 1
      this.streamsOn.set(connection, left)
      if (left === 0) connection.unref()
      if (notify) handlers.end(err)
    }
    const frames = new FrameReader()
    const status = new GrpcStatusReader()
    const stream = connection.request(this.headersFor(path), undefined, {
      header: status.header,
      data: (chunk) => {
        if (done) return
        let messages: Buffer[]
        try {
          messages = frames.push(chunk)
        } catch (err) {
          stream.cancel()
          return finish(new EtcdCallError(GrpcStatus.INTERNAL, `Response message parsing error: ${(err as Error).message}`), true)
        }
        for (const m of messages) {
          if (done) return
          handlers.message(m)
        }
      },
      end: (failure) => {
        if (failure) return finish(transportFailure(failure), true)
        const ended = status.ended()
        if (!ended) return finish(new EtcdCallError(GrpcStatus.UNAVAILABLE, 'stream closed without a status'), true)
        finish(ended.code === GrpcStatus.OK ? undefined : new EtcdCallError(ended.code, ended.details), true)
      },
    })
    return {
      send: (request) => {
        if (!done) stream.write(framed(request), false)
      },
      close: () => {
        if (done) return
        finish(undefined, false)
        // Half-closed first, as gRPC's clients cancel: etcd then sees a cancelled stream, not a broken one.
        stream.write(Buffer.alloc(0), true)
        stream.cancel()
      },
    }
  }

  /** Drops the connection; the next call opens a new one. */
  reset(): void {
    const connection = this.connection
    this.connection = undefined
    this.stopKeepalive()
    connection?.destroy()
  }

  /** No new calls; those under way finish (as a gRPC channel's close). */
  close(): void {
    this.closed = true
    const connection = this.connection
    this.connection = undefined
    this.stopKeepalive()
    connection?.close()
  }

  private headersFor(path: string): Buffer {
    let block = this.headerBlocks.get(path)
    if (!block) {
      block = encodeRequestHeaders([
        [':method', 'POST'],
        [':scheme', this.url.protocol === 'https:' ? 'https' : 'http'],
        [':path', path],
        [':authority', this.url.host],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
      ])
      this.headerBlocks.set(path, block)
    }
    return block
  }

  /** The connection new calls go to: the current one, or a new one when it failed or is going away. */
  private open(): ClientConnection {
    const current = this.connection
    if (current?.usable) return current
    this.stopKeepalive()
    const tls = this.url.protocol === 'https:' ? this.opts.tls : undefined
    const connection = new ClientConnection({ url: this.url, ...(tls ? { tls } : {}) })
    this.connection = connection
    connection.onClose(() => {
      if (this.connection !== connection) return
      this.connection = undefined
      this.stopKeepalive()
    })
    this.startKeepalive(connection)
    return connection
  }

  private stopKeepalive(): void {
    if (this.keepalive) clearInterval(this.keepalive)
    this.keepalive = undefined
  }

  private startKeepalive(connection: ClientConnection): void {
    const every = this.opts.keepaliveMs ?? 30000
    const timeout = this.opts.keepaliveTimeoutMs ?? 10000
    if (every <= 0) return
    this.keepalive = setInterval(() => {
      if (this.connection !== connection || !connection.connected) return
      const timer = setTimeout(() => this.connection === connection && this.reset(), timeout)
      timer.unref()
      connection.ping(() => clearTimeout(timer))
    }, every)
    this.keepalive.unref()
  }
}
