/**
 * Upstream's ReadHeaderTimeout on HTTP/1.1 connections: a client has 32 s
 * to send a request's headers, counted from the end of the TLS handshake
 * for its first request. Node enforces its own `headersTimeout` on an
 * https server, but not on the HTTP/1.1 connections of an HTTP/2 server
 * (`allowHTTP1`), which the listener is: a client that sent part of a
 * request line, or one header byte every few seconds, held its connection
 * and file descriptor for as long as it liked, and a few thousand such
 * clients held the server's.
 *
 * After a request is answered the connection may wait the idle timeout for
 * the next one to begin (Node's keep-alive timeout closes it when nothing
 * comes), and the headers are then due within the header timeout: the
 * deadline is both together, which a client trickling bytes cannot push
 * back. A connection past its deadline is closed without an answer, as
 * Go's server closes it. Deadlines are checked by one sweep over the
 * waiting connections, as Node checks its own, so a request costs two map
 * writes and no timer.
 */
import type { TLSSocket } from 'node:tls'

/** Upstream's ReadHeaderTimeout, "just shy of" its 34 s upper bound on request timeouts; also its TLS handshake's deadline. */
export const READ_HEADER_TIMEOUT_MS = 32_000

/** How often deadlines are checked: a connection is closed at most this long after its deadline. */
const SWEEP_MS = 1_000

export class HeaderDeadlines {
  /** When each waiting connection's headers are due (Date.now() ms); a connection serving a request is not here. */
  private readonly due = new Map<TLSSocket, number>()
  private readonly sweeper: ReturnType<typeof setInterval> | undefined

  /** `headersWithinMs` 0 sets no deadline. */
  constructor(
    private readonly headersWithinMs: number,
    private readonly idleMs: number,
  ) {
    if (headersWithinMs <= 0) return
    this.sweeper = setInterval(() => this.sweep(), Math.min(SWEEP_MS, Math.max(10, headersWithinMs / 4)))
    this.sweeper.unref()
  }

  /** The TLS handshake is done: the first request's headers are due. */
  connected(socket: TLSSocket): void {
    if (this.sweeper) this.due.set(socket, Date.now() + this.headersWithinMs)
  }

  /** A request's (or an upgrade's) headers were read: nothing is due while it is served. */
  headersRead(socket: TLSSocket): void {
    this.due.delete(socket)
  }

  /** Every request read so far is answered: the next may begin within the idle timeout and then has the header timeout. */
  idle(socket: TLSSocket): void {
    if (this.sweeper && !socket.destroyed) this.due.set(socket, Date.now() + this.idleMs + this.headersWithinMs)
  }

  closed(socket: TLSSocket): void {
    this.due.delete(socket)
  }

  stop(): void {
    clearInterval(this.sweeper)
    this.due.clear()
  }

  private sweep(): void {
    const now = Date.now()
    for (const [socket, at] of this.due) {
      if (now < at) continue
      this.due.delete(socket)
      socket.destroy()
    }
  }
}
