/**
 * Answers whose body is bytes in hand, without a stream until one is asked
 * for.
 *
 * Node 20's Response makes a ReadableStream for every body it is given, at
 * construction (some 25 µs each: the stream is made transferable), though
 * an in-process caller mostly reads the body with `json()`, `text()` or
 * `arrayBuffer()`, and the server's own clients always do. A BytesResponse
 * is a Response made without a body; those three read the bytes directly,
 * and anything else that needs the body (`body`, `clone()`, `blob()`,
 * `formData()`) gets it from a Response of the runtime's, made then with
 * the same bytes, status and headers.
 *
 * Off unless a runtime turns it on (`useLazyResponseBodies`): Node's
 * entry points do. Bun's and Deno's servers, and other runtimes', read a
 * returned Response's body from the runtime's own slots rather than
 * through these members, and would find none. Where the global Response
 * is not the runtime's own (the Node adapter installs a lighter one, whose
 * writer takes the bytes directly), that one is used as it is.
 */

import { answerWithPlainHeaders, plainBodyOf } from './answer-headers.js'
import { HeldBody, heldBodyOf, heldBytesOf, holdBody, installBodyReaders } from '../machinery/held-body.js'

const RuntimeResponse = globalThis.Response
let lazyBodies = false

/**
 * Answers of bytes in hand are BytesResponses from now on: for a runtime
 * whose Response makes a stream per body (Node's) and whose consumers read
 * bodies through the Response's members.
 */
export function useLazyResponseBodies(): void {
  lazyBodies = true
}

/** The runtime's Response, as a base whose body members this class defines again (TypeScript's lib types them as fields). */
const BodilessResponse = RuntimeResponse as unknown as new (body: null, init: ResponseInit) => Pick<Response, 'status' | 'statusText' | 'headers'>

class BytesResponse extends BodilessResponse {
  constructor(bytes: Uint8Array, init: ResponseInit) {
    super(null, init)
    holdBody(this, new HeldBody(bytes, (held) => new RuntimeResponse(held, { status: this.status, statusText: this.statusText, headers: this.headers })))
  }

  clone(): Response {
    const held = heldBodyOf(this)
    if (held.made) return (held.made as Response).clone()
    if (held.used) throw new TypeError('Response.clone: Body has already been consumed.')
    return new BytesResponse(held.bytes, { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) }) as unknown as Response
  }
}
installBodyReaders(BytesResponse.prototype)

/** A Response whose body is `bytes`, with `headers` (names in lower case; the object is the answer's from now on). */
export function bytesResponse(bytes: Uint8Array, status: number, headers: Record<string, string>): Response {
  // The global one is the runtime's own: the light answer; another (the Node adapter's): that one, its headers a record.
  if (globalThis.Response !== RuntimeResponse) return answerWithPlainHeaders(bytes, status, headers)
  return lazyBodies ? (new BytesResponse(bytes, { status, headers }) as unknown as Response) : new RuntimeResponse(bytes, { status, headers })
}

/**
 * The body of an answer the server made from what it had in hand (an
 * object's bytes, a Status), read without reading the answer: no stream, no
 * copy of the answer. Undefined for an answer made otherwise (a stream, a
 * proxied answer): read that one as any Response.
 */
export function answerBodyOf(response: Response): Uint8Array | string | undefined {
  return plainBodyOf(response) ?? heldBytesOf(response)
}
