/**
 * The daemon's listener: TLS with HTTP/2 and HTTP/1.1 on one port, client
 * certificates requested but not required (token and anonymous clients must
 * get through), the verification result handed to core as ConnectionInfo.
 * Built on @hono/node-server's request listener (reference/dependencies.md 5).
 */
import { constants } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { SecureContext, SecureVersion, TLSSocket } from 'node:tls'
import { getRequestListener, RequestError } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import { plainHeadersOf } from '../../../core/http/answer-headers.js'
import { hasUnwritableHeaderCharacter, writableHeaderValue } from '../../../core/http/header-values.js'
import { statusResponse as statusErrorResponse } from '../../../core/http/respond.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { MAX_HEADER_BYTES } from '../../../core/machinery/limits.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { ConnectionInfo } from '../../../core/ports.js'
import { type ClientCABundles, type ClientCAs, clientCAs } from './client-cas.js'
import { type ConnectionInfoAt, connectionInfoAt, type TlsLike } from './connection-identity.js'
import type { EgressDialers } from './egress-dialer.js'
import { dotSegmentMessage, dotSegmentOf } from './dot-segments.js'
import { hasMalformedEscape, malformedRequestResponse } from './malformed-escapes.js'
import { reusePortWorks } from './reuse-port.js'
import { handleUpgrade } from './upgrade-passthrough.js'
import { directBodyOf, mayBeWatch, writeDirect } from './direct-body.js'
import { HeaderDeadlines, READ_HEADER_TIMEOUT_MS } from './header-deadlines.js'

/** What the listener needs of an ApiServer: its fetch handler. */
export interface FetchHandler {
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>
}

export interface ServeTlsOptions {
  host: string
  /** 0 picks a free port. */
  port: number
  /** PEM private key and certificate (chain) of the serving certificate. */
  key: string
  cert: string
  /**
   * PEM bundle of CAs that client certificates are verified against
   * (`--client-ca-file`). Without it, or `requestHeaderCA`, no client certificate is requested.
   */
  clientCA?: string
  /**
   * PEM bundle of the front-proxy CA (`--requestheader-client-ca-file`): a
   * certificate it verified may carry an identity in headers, and is a
   * client certificate user only if `clientCA` verifies it too.
   */
  requestHeaderCA?: string
  /** Serve HTTP/2 next to HTTP/1.1 (`--disable-http2-serving` turns it off). @default true */
  http2?: boolean
  logger: Logger
  /** How long close() lets in-flight requests finish before cutting connections. @default 1000 */
  drainTimeoutMs?: number
  /** OpenSSL cipher list (`--tls-cipher-suites`, mapped by tls-options.ts). @default the runtime's */
  ciphers?: string
  /** Oldest TLS version (`--tls-min-version`). @default 'TLSv1.2' */
  minVersion?: SecureVersion
  /** The context of a client that asked for a name (`--tls-sni-cert-key`); undefined serves the default certificate. */
  sniContext?: (servername: string) => SecureContext | undefined
  /** Most concurrent streams per HTTP/2 connection (`--http2-max-streams-per-connection`); 0 keeps the runtime's. */
  http2MaxStreams?: number
  /** Fraction of HTTP/2 requests after which the connection gets a GOAWAY (`--goaway-chance`). @default 0 */
  goawayChance?: number
  /** Bind with SO_REUSEPORT (`--permit-port-sharing`); serveTls rejects it where the runtime would drop it (reuse-port.ts). @default false */
  reusePort?: boolean
  /** Most bytes a second each way on an exec, attach or port-forward stream (`--max-connection-bytes-per-sec`). @default 0, unlimited */
  maxConnectionBytesPerSec?: number
  /** The proxies of the egress selections, through which upgraded connections to a node agent go. */
  egressDialers?: EgressDialers
  /** How long a connection may wait for its next request (HTTP/1.1) or stream (HTTP/2) before it is closed. @default IDLE_TIMEOUT_MS */
  idleTimeoutMs?: number
  /** How long a client has for its TLS handshake, and on HTTP/1.1 for a request's headers (header-deadlines.ts); 0: no limit. @default READ_HEADER_TIMEOUT_MS */
  readHeaderTimeoutMs?: number
}

/**
 * How long a connection without a request in flight stays open: upstream's
 * server closes one idle for 90 s (its IdleTimeout, HTTP/1.1 and HTTP/2
 * alike). Without it idle connections stayed until the client left, and a
 * client could hold the server's file descriptors by the thousand.
 */
export const IDLE_TIMEOUT_MS = 90_000

export interface TlsListener {
  port: number
  /**
   * Trusts new client CA bundles (the files were re-read): handshakes verify
   * against them from now on, and the certificate of a connection already
   * open is verified against them on its next request. Throws, changing
   * nothing, for a bundle that does not parse.
   */
  setClientCAs(bundles: ClientCABundles): void
  /** Stops accepting connections; idle HTTP/1.1 ones close, HTTP/2 ones get a GOAWAY, busy ones finish. Does not wait. */
  stopAccepting(): void
  /** Serves a new default certificate to connections from now on (a rotated `--tls-cert-file`). */
  setServingCertificate(pair: { key: string; cert: string }): void
  /** Stops accepting, lets in-flight requests finish for a moment, then ends what is left (watches) and resolves. */
  close(): Promise<void>
}

/**
 * The most bytes of header list Node's HTTP/2 layer takes on one request; it
 * resets the stream beyond (whatever SETTINGS the server sends). HTTP/1.1's
 * bound is Go's 1 MiB, as upstream's server takes (a bearer token with many
 * groups passes Node's own default of 16 KiB), request line included. Both
 * are checked by node-header-limits.test.ts.
 */
export const HTTP2_MAX_HEADER_LIST_BYTES = 65_535
const HTTP1_MAX_HEADER_BYTES = MAX_HEADER_BYTES
/**
 * Header lines are bounded by their bytes alone, as Go's server bounds them:
 * Node's own bounds by count (2,000 entries on HTTP/1.1, names and values
 * counted apart; 128 fields on HTTP/2) dropped the lines past them silently on
 * HTTP/1.1 (a thousand `Impersonate-Group` lines kept of three thousand) and
 * reset the stream on HTTP/2 (kubectl with 200 `--as-group`). On HTTP/2 the
 * bytes allow no more than this many fields (32 bytes of overhead each).
 */
const HTTP2_MAX_HEADER_FIELDS = Math.ceil(HTTP2_MAX_HEADER_LIST_BYTES / 32)

/**
 * Concurrent streams per HTTP/2 connection when `--http2-max-streams-per-connection`
 * is 0: Go's HTTP/2 server's default, which upstream's 0 means. Node's own
 * default has no bound, and one connection's thousands of watches held
 * every other client up.
 */
export const GO_HTTP2_MAX_STREAMS = 250

/**
 * Connection-specific headers: HTTP/2 forbids them and Node's http2 layer
 * throws on them in writeHead, which the adapter turns into a process crash
 * (dependencies.md, trap 12). They are meaningless end to end on HTTP/1.1 too.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'http2-settings', 'host'])

/** What an answer's headers say about its connection, read in one pass over them (each lookup by name costs a validation). */
interface ConnectionHeaders {
  /** It asks to end its connection (`Connection: close`, as core's shutdown filter sets it). */
  close: boolean
  /** It carries a hop-by-hop header, which must not be passed on. */
  hopByHop: boolean
  /**
   * A value holds a character Node refuses to write (core/http/header-values.ts). Node refuses it in writeHead,
   * after the handler's work is done, which the adapter answered with a 500: a stored create answered as failed.
   */
  unwritable: boolean
}

export function connectionHeadersOf(response: Response): ConnectionHeaders {
  const found = { close: false, hopByHop: false, unwritable: false }
  const note = (value: string, name: string): void => {
    if (hasUnwritableHeaderCharacter(value)) found.unwritable = true
    if (!HOP_BY_HOP.has(name)) return
    found.hopByHop = true
    if (name === 'connection' && value.split(',').some((token) => token.trim().toLowerCase() === 'close')) found.close = true
  }
  // Core's own answers keep their headers as a record until read (core/http/answer-headers.ts): reading `headers` would build a Headers object.
  const record = plainHeadersOf(response)
  if (record) for (const name in record) note(record[name] as string, name)
  else response.headers.forEach(note)
  return found
}

/**
 * A copy of `response` that Node can write (when `connectionHeadersOf` found
 * something): without hop-by-hop headers, and with each character Node
 * refuses in a value sent as a space, as Go's header writer sends a CR or LF.
 * The answer stays the handler's: its status and body say what was done.
 */
export function writableAnswer(response: Response): Response {
  const headers = response.headers
  const clean = new Headers()
  for (const [name, value] of headers) clean.append(name, writableHeaderValue(value))
  // `Connection: x-foo` makes x-foo hop-by-hop as well (RFC 9110 7.6.1).
  for (const token of (headers.get('connection') ?? '').split(',')) {
    const name = token.trim()
    if (name) clean.delete(name)
  }
  for (const name of HOP_BY_HOP) clean.delete(name)
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: clean })
}

/**
 * How long an idle HTTP/2 session may stay after its GOAWAY before it is cut: Go's HTTP/2 server closes the
 * connection this long (its goAwayTimeout, 1 s) after a graceful GOAWAY the client did not answer by closing.
 */
export const GOAWAY_TIMEOUT_MS = 1000

/**
 * Closes (GOAWAY) an HTTP/2 session once it has had no stream open for `ms`: its watches keep it open. A
 * session still there a moment later, with no stream open, is destroyed: Node's graceful close waits for
 * a stream whose header block never ended (a HEADERS frame without END_HEADERS, then silence), which no
 * handler ever sees, and such a connection stayed open for good.
 */
function closeWhenIdle(session: Http2Session, ms: number): void {
  let open = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const idle = (): void => {
    timer = setTimeout(() => {
      session.close()
      timer = setTimeout(() => {
        if (open === 0 && !session.destroyed) session.destroy()
      }, GOAWAY_TIMEOUT_MS)
      timer.unref()
    }, ms)
    timer.unref()
  }
  idle()
  session.on('stream', (stream: { once(event: 'close', listener: () => void): unknown }) => {
    open++
    clearTimeout(timer)
    stream.once('close', () => {
      if (--open === 0 && !session.closed) idle()
    })
  })
  session.once('close', () => clearTimeout(timer))
}

function bundlesGiven(bundles: ClientCABundles): boolean {
  return bundles.clientCA !== undefined || bundles.requestHeaderCA !== undefined
}

type Incoming = IncomingMessage | Http2ServerRequest
type Outgoing = ServerResponse | Http2ServerResponse

/**
 * Tells the adapter the answer was written here. Made a full Response first:
 * the adapter's own lightweight one (once it replaced the global) would have
 * the adapter write a status for it.
 */
const alreadySent: Response = RESPONSE_ALREADY_SENT
void alreadySent.bodyUsed

/**
 * How much of a body its handler left unread (a 413, a request refused
 * before its body was read) is read and thrown away to keep the connection:
 * past it the connection is closed after the answer, as Go's server does,
 * rather than reading megabytes nobody asked for.
 */
const MAX_UNREAD_BODY_DRAINED = 256 * 1024

function leftLargeBodyUnread(incoming: Incoming): boolean {
  if (isHttp2(incoming) || incoming.complete) return false
  const declared = Number(incoming.headers['content-length'] ?? Number.NaN)
  // A chunked body's length is unknown: it may be as large as the client likes.
  return !(declared <= MAX_UNREAD_BODY_DRAINED)
}

/**
 * How long a connection closed on a body left unread stays half-open: the
 * answer and our end of the stream are sent at once, the socket itself is
 * destroyed after this delay. A client still writing its body (Node's http
 * client writes the whole body before it reads) would otherwise meet a reset
 * on its next write and lose the answer with it; Go's server waits the same
 * 500 ms (rstAvoidanceDelay) before it closes such a connection.
 */
const UNREAD_BODY_LINGER_MS = 500

/**
 * Makes Node's end of this response's connection linger: Node calls
 * `destroySoon()` once an answer sent with `Connection: close` is written,
 * which would destroy the socket as soon as our side is flushed. Ending our
 * side only, and destroying later, keeps reading (and dropping) what the
 * client still sends until it has read the answer.
 */
function lingerOnClose(socket: TLSSocket): void {
  socket.destroySoon = function lingeringDestroySoon(this: TLSSocket) {
    this.end()
    setTimeout(() => this.destroy(), UNREAD_BODY_LINGER_MS).unref()
  }
}

/** A socket's handle, which Node's HTTP/1.1 parser reads directly (consumes), past the socket's stream. */
interface ReadableHandle {
  readStart(): number
  readStop(): number
}

/** Sockets whose reading pauseReading stopped. */
const readingStopped = new WeakSet<TLSSocket>()

/**
 * Stops reading a connection's bytes. Node's HTTP/1.1 parser reads the
 * socket's handle itself, so pausing the socket's stream stops nothing,
 * and pausing the parser makes it refuse the next bytes as a parse error:
 * the handle is stopped instead, and the bytes wait in the kernel, as with
 * Go's server. What the handle already read is still parsed (a TLS record).
 */
function pauseReading(socket: TLSSocket): void {
  const handle = (socket as unknown as { _handle?: ReadableHandle | null })._handle
  if (!handle || readingStopped.has(socket)) return
  readingStopped.add(socket)
  handle.readStop()
}

function resumeReading(socket: TLSSocket): void {
  const handle = (socket as unknown as { _handle?: ReadableHandle | null })._handle
  if (!handle || !readingStopped.delete(socket)) return
  handle.readStart()
}

function isHttp2(incoming: Incoming): incoming is Http2ServerRequest {
  return 'stream' in incoming
}

/** A metav1.Status for failures that happen before core sees the request, written as core writes every Status. */
function statusResponse(code: 400 | 500, reason: 'BadRequest' | 'InternalError', message: string): Response {
  return statusErrorResponse(new StatusError(code, reason, message))
}

/**
 * Serves `server` over TLS on opts.host:opts.port. With `reusePort` on a
 * runtime whose listen() would drop it, rejects instead of binding the port
 * exclusively, so an embedding program learns it as the daemon does.
 */
export async function serveTls(server: FetchHandler, opts: ServeTlsOptions): Promise<TlsListener> {
  if (opts.reusePort && !(await reusePortWorks())) throw new Error('reusePort: this runtime cannot bind with SO_REUSEPORT on this platform (on Linux, Bun, Deno, and Node 22.12 or later can)')
  return listenTls(server, opts)
}

function listenTls(server: FetchHandler, opts: ServeTlsOptions): Promise<TlsListener> {
  const { logger } = opts
  let cas: ClientCAs | undefined = bundlesGiven(opts) ? clientCAs(opts) : undefined
  const drainTimeoutMs = opts.drainTimeoutMs ?? 1000

  // One source per connection: the certificate's verdict is kept until the bundles change or its time passes (connection-identity.ts).
  const connections = new WeakMap<object, ConnectionInfoAt>()
  const infoFor = (incoming: Incoming): ConnectionInfo => {
    // HTTP/2 gives each stream its own socket proxy; the session is stable.
    const key: object = isHttp2(incoming) ? incoming.stream.session ?? incoming.socket : incoming.socket
    let infoAt = connections.get(key)
    if (!infoAt) {
      infoAt = connectionInfoAt(incoming.socket as unknown as TlsLike, {
        // One source per HTTP/2 session or HTTP/1 socket, so one protocol for all its requests.
        protocol: `HTTP/${incoming.httpVersion}`,
        // Node refuses longer headers itself, so core need not count them (core/machinery/limits.ts).
        headerBytesLimit: isHttp2(incoming) ? HTTP2_MAX_HEADER_LIST_BYTES : HTTP1_MAX_HEADER_BYTES,
      })
      connections.set(key, infoAt)
    }
    return infoAt(cas, Date.now())
  }

  const goawayChance = opts.goawayChance ?? 0
  const listener = getRequestListener(
    async (request, env) => {
      const target = env.incoming.url ?? ''
      // Refused before the Request's URL resolves it into another path (dot-segments.ts), and as Go refuses
      // a request line it cannot parse, before any handler (malformed-escapes.ts).
      const dot = dotSegmentOf(target)
      const response = hasMalformedEscape(target)
        ? malformedRequestResponse()
        : dot !== undefined
          ? statusResponse(400, 'BadRequest', dotSegmentMessage(dot))
          : // The connection's record, with this request's header lines for the identity headers read line by line.
            await server.fetch(request, { ...infoFor(env.incoming), headerLines: env.incoming.rawHeaders })
      // Connection: close is hop-by-hop: HTTP/1.1 keeps it (Node then closes the socket after
      // the answer); HTTP/2 forbids it and sends a GOAWAY instead, as Go's server does.
      const incoming: Incoming = env.incoming
      const found = connectionHeadersOf(response)
      const bodyLeftUnread = leftLargeBodyUnread(incoming)
      const close = found.close || bodyLeftUnread || (goawayChance > 0 && isHttp2(incoming) && Math.random() < goawayChance)
      const clean = found.hopByHop || found.unwritable ? writableAnswer(response) : response
      if (!close && mayBeWatch(incoming.url)) {
        // A watch: its events are written as they come, without the adapter's stream reading.
        const direct = directBodyOf(clean)
        if (direct) {
          writeDirect(clean, direct, env.outgoing)
          return alreadySent
        }
      }
      if (!close) return clean
      if (isHttp2(incoming)) {
        env.outgoing.once('finish', () => incoming.stream.session?.close())
        return clean
      }
      if (bodyLeftUnread) lingerOnClose(incoming.socket as TLSSocket)
      const closing = new Response(clean.body, clean)
      closing.headers.set('connection', 'close')
      return closing
    },
    {
      errorHandler: (err) => {
        const message = err instanceof Error ? err.message : String(err)
        // The adapter could not build a Request (bad Host, bad path): the client's fault.
        if (err instanceof RequestError) return statusResponse(400, 'BadRequest', message)
        logger.error({ err: message }, 'request handler failed')
        return statusResponse(500, 'InternalError', `Internal error occurred: ${message}`)
      },
    },
  )

  const sockets = new Set<TLSSocket>()
  const sessions = new Set<Http2Session>()
  const idleTimeoutMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS
  const readHeaderTimeoutMs = opts.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS
  const headerDeadlines = new HeaderDeadlines(readHeaderTimeoutMs, idleTimeoutMs)
  /** Open HTTP/1.1 requests per socket, so draining can close idle keep-alive connections. */
  const http1InFlight = new Map<TLSSocket, number>()
  let closing = false

  /**
   * HTTP/1.1 requests that came pipelined behind another on their
   * connection, each served once the one before it has been answered, as
   * Go's server reads a connection's next request only then. Node's parser
   * hands over every request of a chunk at once: thousands of GETs
   * pipelined on a few connections whose answers were never read had all
   * been served together, and held every other client for seconds.
   */
  const pipelined = new Map<TLSSocket, Array<() => void>>()

  const onRequest = (incoming: Incoming, outgoing: Outgoing): void => {
    if (!isHttp2(incoming)) {
      const socket = incoming.socket as TLSSocket
      headerDeadlines.headersRead(socket)
      const before = http1InFlight.get(socket) ?? 0
      http1InFlight.set(socket, before + 1)
      outgoing.once('close', () => {
        const left = (http1InFlight.get(socket) ?? 1) - 1
        http1InFlight.set(socket, left)
        if (left === 0) {
          if (closing) socket.end()
          headerDeadlines.idle(socket)
        }
        const queue = pipelined.get(socket)
        const next = queue?.shift()
        if (!next || socket.destroyed) return
        // The chunk read last is served: read the connection again.
        if (queue!.length === 0) resumeReading(socket)
        next()
      })
      if (before > 0) {
        let queue = pipelined.get(socket)
        if (!queue) pipelined.set(socket, (queue = []))
        queue.push(() => serve(incoming, outgoing))
        // A client that sends its next request as soon as it has read an answer often has it here before the answer's
        // write is reported done: that one waits without stopping the reading, which would cost two system calls per
        // request. A second request waiting means pipelining: nothing more is read until what was sent is answered.
        if (queue.length > 1) pauseReading(socket)
        return
      }
    }
    serve(incoming, outgoing)
  }

  const serve = (incoming: Incoming, outgoing: Outgoing): void => {
    // The adapter's own error path can throw again while writing its 500;
    // catching here keeps one broken response from taking the process down.
    listener(incoming, outgoing).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'response failed')
      if (!outgoing.headersSent) {
        try {
          outgoing.writeHead(500)
          outgoing.end()
          return
        } catch {
          // the stream broke while writing the 500: destroy it below
        }
      }
      outgoing.destroy()
    })
  }

  // The serving pair and the client CA bundle change at run time (rotated files); each change sets the whole context.
  let servingPair = { key: opts.key, cert: opts.cert }
  const contextOptions = () => ({
    ...servingPair,
    minVersion: opts.minVersion ?? ('TLSv1.2' as const),
    ...(opts.ciphers ? { ciphers: opts.ciphers } : {}),
    // Without an explicit CA, Node would verify client certificates against
    // the public web roots: never request them then. No session tickets with
    // client certificates: a resumed session keeps the leaf but loses the
    // intermediates the client sent, so its chain could not be verified again
    // (connection-identity.ts); the client's next connection is a full handshake.
    ...(cas ? { ca: cas.tlsBundle, requestCert: true, rejectUnauthorized: false, secureOptions: constants.SSL_OP_NO_TICKET } : {}),
  })
  const tlsOptions = contextOptions()
  const sniContext = opts.sniContext
  const serverOptions = {
    ...tlsOptions,
    ...(readHeaderTimeoutMs > 0 ? { handshakeTimeout: readHeaderTimeoutMs } : {}),
    ...(sniContext
      ? { SNICallback: (servername: string, callback: (err: Error | null, ctx?: SecureContext) => void) => callback(null, sniContext(servername)) }
      : {}),
  }
  const httpServer =
    opts.http2 === false
      ? createHttpsServer({ ...serverOptions, maxHeaderSize: HTTP1_MAX_HEADER_BYTES }, onRequest)
      : createSecureServer(
          {
            ...serverOptions,
            allowHTTP1: true,
            maxHeaderListPairs: HTTP2_MAX_HEADER_FIELDS,
            settings: { maxConcurrentStreams: opts.http2MaxStreams || GO_HTTP2_MAX_STREAMS },
          },
          onRequest,
        )
  // HTTP/1.1 on the HTTP/2 server is parsed by Node's HTTP/1 server code, which reads these properties of the server
  // it is given (the options of https.createServer); createSecureServer takes no such options. 0: no count.
  Object.assign(httpServer, { maxHeadersCount: 0 })
  if (opts.http2 !== false) Object.assign(httpServer, { maxHeaderSize: HTTP1_MAX_HEADER_BYTES })

  httpServer.on('secureConnection', (socket: TLSSocket) => {
    // A streamed answer (a proxied response, a watch) is written in pieces: without this, Nagle's algorithm holds a
    // small piece until the client's delayed ACK, some 40 ms, on every such answer.
    socket.setNoDelay(true)
    sockets.add(socket)
    if (socket.alpnProtocol !== 'h2') headerDeadlines.connected(socket)
    socket.once('close', () => {
      sockets.delete(socket)
      headerDeadlines.closed(socket)
      http1InFlight.delete(socket)
      pipelined.delete(socket)
    })
  })
  // HTTP/1.1 between requests; Node's HTTP/1.1 handling of an HTTP/2 server's connections reads the same property.
  ;(httpServer as { keepAliveTimeout?: number }).keepAliveTimeout = idleTimeoutMs
  httpServer.on('session', (session: Http2Session) => {
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
    closeWhenIdle(session, idleTimeoutMs)
  })
  // exec, attach and port-forward: core checks the upgrade, then the connection is spliced to the node agent.
  httpServer.on('upgrade', (incoming: IncomingMessage, socket: TLSSocket, head: Buffer) => {
    // Busy until it closes: draining must not end a live stream as an idle keep-alive connection.
    http1InFlight.set(socket, (http1InFlight.get(socket) ?? 0) + 1)
    headerDeadlines.headersRead(socket)
    handleUpgrade(server, infoFor(incoming), incoming, socket, head, opts.maxConnectionBytesPerSec ?? 0, opts.egressDialers).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'upgrade failed')
      socket.destroy()
    })
  })
  httpServer.on('tlsClientError', (err: Error) => logger.debug({ module: 'serve', err: err.message }, 'TLS handshake failed'))
  httpServer.on('sessionError', (err: Error) => logger.debug({ module: 'serve', err: err.message }, 'HTTP/2 session error'))

  const setClientCAs = (bundles: ClientCABundles): void => {
    if (!cas || !bundlesGiven(bundles)) throw new Error('client certificates were not requested at start; a restart is needed to request them')
    cas = clientCAs(bundles)
    httpServer.setSecureContext(contextOptions())
  }

  let closed: Promise<void> | undefined
  const stopAccepting = (): Promise<void> => {
    if (closed) return closed
    closing = true
    closed = new Promise<void>((resolve) => httpServer.close(() => resolve()))
    // GOAWAY: HTTP/2 clients open no new streams; open ones may finish.
    for (const session of sessions) session.close()
    // Idle HTTP/1.1 keep-alive connections go now; busy ones after their response.
    for (const socket of sockets) {
      if (socket.alpnProtocol !== 'h2' && (http1InFlight.get(socket) ?? 0) === 0) socket.end()
    }
    return closed
  }

  let closeDone: Promise<void> | undefined
  const close = (): Promise<void> => {
    closeDone ??= (async () => {
      const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, drainTimeoutMs, 'timeout').unref())
      const allClosed = stopAccepting()
      if ((await Promise.race([allClosed, timer])) === 'timeout') {
        // What is still open is long-running (watches): cut it.
        for (const session of sessions) session.destroy()
        for (const socket of sockets) socket.destroy()
        await allClosed
      }
      headerDeadlines.stop()
    })()
    return closeDone
  }

  return new Promise((resolve, reject) => {
    httpServer.once('error', reject)
    httpServer.listen({ port: opts.port, host: opts.host, ...(opts.reusePort ? { reusePort: true } : {}) }, () => {
      httpServer.off('error', reject)
      httpServer.on('error', (err: Error) => logger.error({ err: err.message }, 'listener error'))
      resolve({
        port: (httpServer.address() as AddressInfo).port,
        close,
        stopAccepting: () => void stopAccepting(),
        setServingCertificate: (pair) => {
          servingPair = pair
          httpServer.setSecureContext(contextOptions())
        },
        setClientCAs,
      })
    })
  })
}
