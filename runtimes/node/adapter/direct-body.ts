/**
 * Writing a watch's events to the connection without the streams between.
 * The request adapter reads a streamed body through a ReadableStream reader
 * (a pull, a queue and a read with their promises per chunk) and hands each
 * chunk to Node's response; for one event going to a thousand watchers that
 * stack cost more than the response writes. A body core made observable
 * (core/http/observed-body.ts) is read here straight from its source and
 * each chunk written as it comes, on HTTP/1.1 and HTTP/2 alike (a DATA
 * frame on HTTP/2). On Node's HTTP/1.1 a chunk goes to the socket already
 * framed (size line, bytes, CRLF in one buffer made once per event for every
 * watcher), one socket write instead of the response's four; the response
 * still writes the headers and the last chunk, so the connection is used
 * again as before. A watch's events are taken synchronously when ready
 * (`take`): one wake-up per watcher and turn, and no promise per event.
 */
import type { ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import type { Socket } from 'node:net'
import { canTake, type DirectBody, readDirectly } from '../../../core/http/observed-body.js'

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

/** Resolves when `writable` may take more, or `outgoing` has closed. */
function drained(writable: Outgoing | Socket, outgoing: Outgoing): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      writable.off('drain', done)
      outgoing.off('close', done)
      resolve()
    }
    writable.on('drain', done)
    outgoing.on('close', done)
  })
}

/** An event's bytes as one HTTP/1.1 chunk, made once for all the watchers the same bytes go to. */
const framed = new WeakMap<Uint8Array, Buffer>()

function chunkOf(bytes: Uint8Array): Buffer {
  let chunk = framed.get(bytes)
  if (chunk === undefined) {
    const size = `${bytes.byteLength.toString(16)}\r\n`
    chunk = Buffer.allocUnsafe(size.length + bytes.byteLength + 2)
    chunk.write(size, 0, 'latin1')
    chunk.set(bytes, size.length)
    chunk.write('\r\n', size.length + bytes.byteLength, 'latin1')
    framed.set(bytes, chunk)
  }
  return chunk
}

/** Node's own HTTP/1.1 response internals, read only to decide whether the socket may be written directly. */
interface Http1Internals {
  chunkedEncoding?: boolean
  outputData?: unknown[]
}

/**
 * The socket to write framed chunks to, when that is safe: Node itself (not
 * another runtime's imitation of its HTTP module), a chunked answer whose
 * headers are already on the socket, and the socket this answer's own (no
 * earlier pipelined answer still being written).
 */
function chunkSocket(outgoing: Outgoing): Socket | undefined {
  if ('stream' in outgoing || 'Bun' in globalThis || 'Deno' in globalThis) return undefined
  const internals = outgoing as unknown as Http1Internals
  const socket = outgoing.socket as (Socket & { _httpMessage?: unknown }) | null
  if (internals.chunkedEncoding !== true || internals.outputData?.length !== 0 || !socket || socket._httpMessage !== outgoing) return undefined
  return socket
}

let turn: Promise<void> | undefined

/**
 * Resolves once the current turn's callbacks and promises are done, the same
 * promise for every watch that waits in this turn. A commit hands its event
 * to every watcher within its own turn; waiting here lets the writer's answer
 * (its 201) go out first, as it does when the watchers are served apart from
 * the writer, and then writes the event to every watch in one run.
 */
function nextTurn(): Promise<void> {
  turn ??= new Promise((resolve) =>
    setImmediate(() => {
      turn = undefined
      resolve()
    }),
  )
  return turn
}

/** Bodies with chunks ready, to be written in the next turn (see nextTurn), in the order they became ready. */
let readyPumps: Array<() => void> = []

function runReadyPumps(): void {
  const pumps = readyPumps
  readyPumps = []
  for (const pump of pumps) pump()
}

/** Runs `pump` in the next turn, in one run with every other body that became ready in this one. */
function pumpNextTurn(pump: () => void): void {
  if (readyPumps.push(pump) === 1) setImmediate(runReadyPumps)
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
  const socket = chunkSocket(outgoing)
  const fail = (err: unknown) => {
    cancel()
    outgoing.destroy(err instanceof Error ? err : new Error(String(err)))
  }
  if (canTake(body)) {
    // A watch: its events are taken as they are ready, a turn after the commit that made them, with no promise
    // per event; one wake-up per watcher and turn, whatever number of events it then writes.
    const wake = () => pumpNextTurn(pump)
    const pump = (): void => {
      try {
        while (!finished) {
          const chunk = body.take()
          if (chunk === null) return body.whenReady(wake)
          if (chunk === undefined) {
            finished = true
            outgoing.end()
            return
          }
          if (chunk.byteLength === 0) continue
          const more = socket ? socket.write(chunkOf(chunk)) : (outgoing as ServerResponse).write(chunk)
          if (!more) return void drained(socket ?? outgoing, outgoing).then(wake)
        }
      } catch (err) {
        fail(err)
      }
    }
    wake()
    return
  }
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
        if (chunk.byteLength === 0) continue
        await nextTurn()
        if (finished) return
        if (socket) {
          if (!socket.write(chunkOf(chunk))) await drained(socket, outgoing)
        } else if (!(outgoing as ServerResponse).write(chunk)) await drained(outgoing, outgoing)
      }
    } catch (err) {
      fail(err)
    }
  })()
}
