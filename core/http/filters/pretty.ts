/**
 * Indented JSON for people: upstream answers `?pretty=true`, and requests
 * from curl, Wget and browsers, with json.MarshalIndent's text (two spaces,
 * no final newline) instead of json.Encoder's line. Watch streams stay one
 * event a line; /version is indented already and OpenAPI documents never are.
 *
 * Only answers of a known length up to MAX_INDENTED_BYTES are indented, in
 * slices (other requests served between them), where upstream indents on
 * the request's own goroutine; a curl LIST of 50 MB had held every other
 * client for 11 s when indented at once. Larger answers, and lists written
 * as the client reads them, go out as they are (the same JSON, without the
 * indentation).
 */
import type { MiddlewareHandler } from 'hono'
import { indentGoInSteps } from '../../encoding/go-json.js'
import { runInSlices, TimeSlice } from '../../machinery/time-slice.js'
import { type ChainEnv, replaceAnswer } from './context.js'
import { sizedResponse } from '../respond.js'
import { knownSize } from '../response-size.js'

const MAX_INDENTED_BYTES = 1024 * 1024

/** Go's strconv.ParseBool; anything else is false. */
function parseGoBool(text: string): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)
}

function wantsPretty(request: Request): boolean {
  // The URL is parsed only when it may name the parameter, as upstream does: this runs on every request.
  const pretty = request.url.includes('pretty') ? new URL(request.url).searchParams.get('pretty') : null
  if (pretty) return parseGoBool(pretty)
  const agent = request.headers.get('user-agent') ?? ''
  return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0')
}

export const prettyFilter: MiddlewareHandler<ChainEnv> = async (c, next) => {
  await next()
  // Upstream indents what its own serializer writes; a relayed answer goes out byte for byte.
  if (c.get('relayed') || !wantsPretty(c.req.raw) || c.get('requestInfo')?.verb === 'watch') return
  const url = new URL(c.req.url)
  if (url.pathname === '/version' || url.pathname.startsWith('/openapi/')) return
  const type = c.res.headers.get('content-type') ?? ''
  if (!/^application\/json(;|$)/.test(type) || !c.res.body) return
  const size = knownSize(c.res) ?? Number(c.res.headers.get('content-length') ?? Number.NaN)
  if (!(size <= MAX_INDENTED_BYTES)) return
  const text = await c.res.text()
  // The indented text is longer: a Content-Length of the compact one would cut it (HTTP/1.1) or reset the stream (HTTP/2).
  const headers = new Headers(c.res.headers)
  headers.delete('content-length')
  const indented = await runInSlices(indentGoInSteps(text.endsWith('\n') ? text.slice(0, -1) : text), TimeSlice.startingNow())
  replaceAnswer(c, sizedResponse(indented, { status: c.res.status, headers }))
}
