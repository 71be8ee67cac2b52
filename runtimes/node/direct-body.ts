/**
 * Writing a watch's events to the connection without the streams between.
 * The request adapter reads a streamed body through a ReadableStream reader
 * (a pull, a queue and a read with their promises per chunk) and hands each
 * chunk to Node's response; for one event going to a thousand watchers that
 * stack cost more than the response writes. A body core made observable
 * (core/http/observed-body.ts) is read here straight from its source and
 * each chunk written as it comes, on HTTP/1.1 and HTTP/2 alike; Node frames
 * it (a chunk on HTTP/1.1, a DATA frame on HTTP/2) as before.
 */
import type { ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import { type DirectBody, readDirectly } from '../../core/http/observed-body.js'

type Outgoing = ServerResponse | Http2ServerResponse

/** A request whose answer may be a watch: `?watch=1` or a `/watch/` path (checked before the body is looked at). */
export function mayBeWatch(url: string | undefined): boolean {
  return url !== undefined && url.includes('watch')
}

/** `response`'s body to read directly, when core made it observable; undefined otherwise (the adapter writes it). */
export function directBodyOf(response: Response): DirectBody | undefined {
  const body = response.body
  return body ? readDirectly(body) : undefined
}

function headersOf(response: Response): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of response.headers) {
    if (name === 'set-cookie') continue
    out[name] = value
  }
  const cookies = response.headers.getSetCookie()
  if (cookies.length) out['set-cookie'] = cookies
  return out
}

/** Resolves when `outgoing` may take more (or has closed). */
function drained(outgoing: Outgoing): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off('drain', done)
      outgoing.off('close', done)
      resolve()
    }
    outgoing.on('drain', done)
    outgoing.on('close', done)
  })
}

/**
 * Writes `response`'s status and headers, then every chunk `body` gives, and
 * ends the answer when it ends; a client that goes away cancels the body.
 */
export function writeDirect(response: Response, body: DirectBody, outgoing: Outgoing): void {
  outgoing.writeHead(response.status, headersOf(response))
  // The headers go now: a watch may wait long for its first event (HTTP/2 sends them at writeHead).
  if ('flushHeaders' in outgoing) outgoing.flushHeaders()
  let finished = false
  const cancel = () => {
    if (finished) return
    finished = true
    body.cancel()
  }
  outgoing.once('close', cancel)
  void (async () => {
    try {
      for (;;) {
        const chunk = await body.pull()
        if (finished) return
        if (chunk === undefined) {
          finished = true
          outgoing.end()
          return
        }
        if (!(outgoing as ServerResponse).write(chunk)) await drained(outgoing)
      }
    } catch (err) {
      cancel()
      outgoing.destroy(err instanceof Error ? err : new Error(String(err)))
    }
  })()
}
