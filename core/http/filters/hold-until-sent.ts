/**
 * A seat of the in-flight limits held until the answer has been sent, as
 * upstream counts a request until its handler returns, which for a LIST is
 * once its encoded body has been written to the connection. Here a handler
 * may return a body that is produced as it is read (a long LIST encodes its
 * items chunk by chunk, pulled by the connection's writer as the client
 * reads): the seat of such an answer is given back when that body ends or the
 * client goes away, not when the handler returns. A small answer of bytes in
 * hand (an object, a Status) fits in the connection's buffers as the handler
 * returns, so its seat is given back then; a large one (a LIST of a few
 * hundred big objects, a Table, protobuf or YAML) is watched to its end as a
 * stream is: given back at once, it let a client that never reads have as
 * many answers of tens of megabytes queued in the server's memory as it
 * asked for, whatever the limit.
 */
import type { Context } from 'hono'
import { observableStream, observeBody } from '../observed-body.js'
import { knownSize, withSize } from '../response-size.js'
import type { ChainEnv } from './context.js'

// An answer nobody ever reads (an embedder's fetch whose body is dropped) would otherwise keep its seat for good:
// once its body is collected, the seat is given back.
const unread = new FinalizationRegistry<() => void>((release) => release())

/**
 * Answers of bytes in hand from this size on keep their seat until written:
 * more than a socket's buffers take at once, so their writer waits for the
 * client to read, as upstream's handler does in its last write.
 */
export const HELD_FROM_BYTES = 256 * 1024

/** Calls `release` once `c.res`'s body has been read to its end or cancelled (at once for an answer without a body). */
export function releaseWhenSent(c: Context<ChainEnv>, release: () => void): void {
  let released = false
  const token = {}
  const once = (): void => {
    if (released) return
    released = true
    unread.unregister(token)
    release()
  }
  const res = c.res
  // Small bytes in hand are written by the runtime as the handler returns, as upstream's handler writes its
  // encoded object before it returns; their body is not read here, which would turn it into a stream.
  const size = knownSize(res)
  if ((size !== undefined && size < HELD_FROM_BYTES) || !res.body) {
    once()
    return
  }
  const body = observeBody(size === undefined ? res.body : endsAfterLastWrite(res.body), { onClose: once, onCancel: once })
  unread.register(body, once, token)
  if (body === res.body) return
  c.res = new Response(body, res)
  // Kept on the answer the context now holds (Hono wraps what it is given): the filters before this one still
  // read it (sizes, the indenting of a known small answer).
  if (size !== undefined) withSize(c.res, size)
}

/** The pieces a large answer of bytes in hand is handed to the writer in. */
const PIECE_BYTES = 64 * 1024

/**
 * `body` as a stream of pieces that ends only when its reader asks past the
 * last one: a writer asks again once the connection took the piece before
 * (Node's writers wait for the socket to drain), so the seat is held until
 * the answer is written. Pieces, not the one chunk: Node's adapter reads the
 * first few chunks of a body before it writes any (to give a short body a
 * Content-Length), which would see the end of a one-chunk body at once. A
 * TransformStream (observeBody's stage for other streams) would end as soon
 * as its writer took the last chunk.
 */
function endsAfterLastWrite(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let rest: Uint8Array = new Uint8Array(0)
  return observableStream({
    pull: async () => {
      while (rest.byteLength === 0) {
        const next = await reader.read()
        if (next.done) return undefined
        rest = next.value
      }
      const piece = rest.subarray(0, PIECE_BYTES)
      rest = rest.subarray(piece.byteLength)
      return piece
    },
    cancel: () => void reader.cancel(),
  })
}
