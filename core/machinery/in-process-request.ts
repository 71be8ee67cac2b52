/**
 * Requests the server makes to itself with a body in hand: its own client's
 * writes (controllers, `server.client`) and the embedder's seed objects.
 *
 * A Request given a body makes a stream of it at once, and the body reader
 * read that stream back chunk by chunk: some 25 µs of a write through the
 * server's own client. An InProcessRequest is made without a body and holds
 * the bytes (held-body.ts); it declares their length, so the body reader
 * takes them whole with `arrayBuffer()`, and anything that needs the body as
 * a stream (an audit log of request bodies, a proxied request) gets one from
 * the runtime's own Request, made then.
 *
 * These requests never leave the process by themselves (a proxy forwards
 * the stream of `body`), so unlike the answers of core/http/bytes-response.ts
 * they need no runtime's consent.
 */
import { HeldBody, heldBodyOf, holdBody, installBodyReaders } from './held-body.js'

const RuntimeRequest = globalThis.Request
const encoder = new TextEncoder()

/** The runtime's Request, as a base whose body members this class defines again (TypeScript's lib types them as fields). */
const BodilessRequest = RuntimeRequest as unknown as new (input: string, init: RequestInit) => Omit<
  Request,
  'body' | 'bodyUsed' | 'arrayBuffer' | 'blob' | 'formData' | 'json' | 'text' | 'clone' | 'bytes'
>

class InProcessRequest extends BodilessRequest {
  constructor(url: string, init: RequestInit, bytes: Uint8Array) {
    super(url, init)
    const full = (held: Uint8Array) => new RuntimeRequest(this.url, { method: this.method, headers: this.headers, body: held, signal: this.signal, duplex: 'half' } as RequestInit)
    holdBody(this, new HeldBody(bytes, full))
  }

  clone(): Request {
    const held = heldBodyOf(this)
    if (held.made) return (held.made as Request).clone()
    if (held.used) throw new TypeError('Request.clone: Body has already been consumed.')
    return new InProcessRequest(this.url, { method: this.method, headers: new Headers(this.headers), signal: this.signal }, held.bytes) as unknown as Request
  }
}
installBodyReaders(InProcessRequest.prototype)

/** A request to `url` with `body` (text as UTF-8) and its `content-length`. */
export function inProcessRequest(url: string, init: Omit<RequestInit, 'body'>, body: string | Uint8Array): Request {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  const headers = new Headers(init.headers)
  headers.set('content-length', String(bytes.byteLength))
  return new InProcessRequest(url, { ...init, headers }, bytes) as unknown as Request
}
