/**
 * Unary gRPC calls to one etcd member over Node's HTTP/2, for the calls every
 * read and write makes (KV Range and Txn).
 *
 * The general gRPC client costs about twice the CPU per call of this path
 * (docs/benchmarks.md, `write-path`): for every call it builds a chain of
 * call objects (resolving, load-balancing, retrying, subchannel), an
 * interceptor stack, an event emitter, converted metadata and a captured
 * stack trace. A unary call needs a stream, one framed message each way and
 * the status in the trailers; that is all this does. Streams (watches) and
 * the rarer calls (leases, compaction, status) stay with etcd3.
 *
 * Failures come back as the errors etcd3 raises (its `castGrpcError` of an
 * error worded as grpc-js words it), so the fault policy and the error
 * mapping treat both paths alike: a call on a member that could not be
 * reached says "No connection established", which lets the caller try the
 * next member; a call that may have reached etcd is never sent again here.
 */
import * as http2 from 'node:http2'
import { castGrpcError, ClientClosedError } from 'etcd3'
import type { EtcdTls } from './etcd-client.js'

export interface UnaryMemberOptions {
  tls?: EtcdTls
  /** As the gRPC channel's keepalive: a ping after this long, the connection dropped when unanswered. */
  keepaliveMs?: number
  keepaliveTimeoutMs?: number
}

const DEADLINE_EXCEEDED = 4
const INTERNAL = 13
const UNAVAILABLE = 14
const STATUS_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
}

/** An error as grpc-js words a status (`14 UNAVAILABLE: ...`), typed by etcd3. */
export function statusError(code: number, details: string): Error {
  const err = Object.assign(new Error(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`), { code, details })
  return castGrpcError(err)
}

function grpcMessage(value: unknown): string {
  if (typeof value !== 'string') return ''
  try {
    return decodeURIComponent(value)
  } catch {
    return value
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

export class UnaryMember {
  /** `host:port`, as etcd3 names members. */
  readonly host: string
  private session: http2.ClientHttp2Session | undefined
  private connected = false
  private keepalive: ReturnType<typeof setInterval> | undefined
  private closed = false
  private readonly authority: string
  private readonly connectOptions: http2.SecureClientSessionOptions

  constructor(
    endpoint: string,
    private readonly opts: UnaryMemberOptions = {},
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
   * message decoded by `decode`. Rejects with etcd3's typed errors.
   */
  call<T>(path: string, request: Buffer, deadline: number, decode: (message: Buffer) => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClientClosedError('KV'))
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
      const stream = session.request(
        { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' },
        { endStream: false },
      )
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL)
        finish(statusError(DEADLINE_EXCEEDED, 'Deadline exceeded'))
      }, Math.max(0, deadline - Date.now()))
      const chunks: Buffer[] = []
      let length = 0
      let status: unknown
      let message: unknown
      stream.on('response', (headers) => {
        // A trailers-only answer (every error) carries its status in the headers.
        if (headers['grpc-status'] !== undefined) {
          status = headers['grpc-status']
          message = headers['grpc-message']
        }
      })
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        length += chunk.length
      })
      stream.on('trailers', (trailers) => {
        status = trailers['grpc-status']
        message = trailers['grpc-message']
      })
      stream.on('error', (err: Error) => {
        // Before the connection was up nothing was sent: the caller may go to the next member.
        const reached = wasConnected || this.connected
        finish(statusError(UNAVAILABLE, reached ? err.message : `No connection established. Last error: ${err.message}`))
      })
      stream.on('close', () => {
        if (settled) return
        if (status === undefined) {
          const code = stream.rstCode
          const reached = wasConnected || this.connected
          const detail = `stream closed without a status (HTTP/2 code ${code ?? 'none'})`
          return finish(statusError(UNAVAILABLE, reached ? detail : `No connection established. Last error: ${detail}`))
        }
        const code = Number(status)
        if (code !== 0) return finish(statusError(code, grpcMessage(message)))
        let value: T
        try {
          value = decode(unframe(chunks, length))
        } catch (err) {
          return finish(statusError(INTERNAL, `Response message parsing error: ${(err as Error).message}`))
        }
        finish(undefined, value)
      })
      const frame = Buffer.allocUnsafe(5 + request.length)
      frame[0] = 0
      frame.writeUInt32BE(request.length, 1)
      request.copy(frame, 5)
      stream.end(frame)
    })
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
