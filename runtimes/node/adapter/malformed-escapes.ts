/**
 * Request paths with a malformed escape (`%zz`, a `%` at the end). Go's
 * server cannot parse such a request line (`url.ParseRequestURI` refuses the
 * path) and answers a plain `400 Bad Request` itself, closing the
 * connection: the request never reaches a handler, so it is neither
 * authenticated nor audited. The Node listener answers alike before the
 * request becomes a Request. The query is not checked here: Go keeps it
 * raw, and its handlers read what they can of it.
 */

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

/** True when the path of `target` (a request line's target, origin or absolute form) has a `%` not followed by two hex digits. */
export function hasMalformedEscape(target: string): boolean {
  const query = target.indexOf('?')
  let path = query < 0 ? target : target.slice(0, query)
  if (!path.includes('%')) return false
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path)
  if (authority) path = path.slice(authority[0].length)
  for (let i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
    if (i + 2 >= path.length || !isHex(path.charCodeAt(i + 1)) || !isHex(path.charCodeAt(i + 2))) return true
  }
  return false
}

/** Go's own answer to a request line it cannot parse: its status text as plain text, the connection closed after it. */
export const MALFORMED_REQUEST_TEXT = '400 Bad Request'

export function malformedRequestResponse(): Response {
  return new Response(MALFORMED_REQUEST_TEXT, { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8', connection: 'close' } })
}
