/**
 * The byte size of an answer built from text or bytes in hand, kept beside
 * the Response so that the request metrics can record
 * `apiserver_response_sizes` without reading the body through a stream (which
 * would also turn the runtime's write of bytes in hand into a streamed one).
 */
import { utf8Length } from '../machinery/utf8-length.js'

const sizes = new WeakMap<Response, number>()

/** `response`, remembered as carrying `body` (its UTF-8 length for text). */
export function withKnownSize(response: Response, body: string | Uint8Array): Response {
  sizes.set(response, typeof body === 'string' ? utf8Length(body) : body.byteLength)
  return response
}

/** `response`, remembered as carrying `bytes` bytes (a size the caller counted, or kept). */
export function withSize(response: Response, bytes: number): Response {
  sizes.set(response, bytes)
  return response
}

/** The body's size in bytes when it was built from text or bytes in hand; undefined otherwise. */
export function knownSize(response: Response): number | undefined {
  return sizes.get(response)
}
