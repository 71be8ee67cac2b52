/**
 * A seat of the in-flight limits held until the answer has been sent, as
 * upstream counts a request until its handler returns, which for a LIST is
 * once its encoded body has been written to the connection. Here a handler
 * may return a body that is produced as it is read (a long LIST encodes its
 * items chunk by chunk, pulled by the connection's writer as the client
 * reads): the seat of such an answer is given back when that body ends or the
 * client goes away, not when the handler returns. An answer of bytes in hand
 * (an object, a Status) is written as the handler returns, so its seat is
 * given back then.
 */
import type { Context } from 'hono'
import { observeBody } from '../observed-body.js'
import { knownSize } from '../response-size.js'
import type { ChainEnv } from './context.js'

// An answer nobody ever reads (an embedder's fetch whose body is dropped) would otherwise keep its seat for good:
// once its body is collected, the seat is given back.
const unread = new FinalizationRegistry<() => void>((release) => release())

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
  // Bytes in hand (knownSize) are written by the runtime as the handler returns, as upstream's handler writes
  // its encoded object before it returns; their body is not read here, which would turn it into a stream.
  if (knownSize(res) !== undefined || !res.body) {
    once()
    return
  }
  const body = observeBody(res.body, { onClose: once, onCancel: once })
  unread.register(body, once, token)
  if (body !== res.body) c.res = new Response(body, res)
}
