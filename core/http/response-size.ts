/**
 * The byte size of an answer built from text or bytes in hand, kept beside
 * the Response so that the request metrics can record
 * `apiserver_response_sizes` without reading the body through a stream (which
 * would also turn the runtime's write of bytes in hand into a streamed one).
 */
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

/** The length of `text` encoded as UTF-8 (a lone surrogate becomes U+FFFD, 3 bytes, as TextEncoder writes it). */
export function utf8Length(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}
