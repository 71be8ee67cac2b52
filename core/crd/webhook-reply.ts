/**
 * What the server keeps of a counterpart's reply (a webhook, an OIDC
 * issuer): bytes read as they arrive and refused past a bound, one reply on
 * its own and all replies being read at once together. Shared by the Web
 * `fetch` client here and by the runtimes' own clients.
 */
import { joinedBytes } from '../machinery/joined-bytes.js'

/** Replies larger than this are refused rather than read into memory. */
export const MAX_WEBHOOK_RESPONSE_BYTES = 64 * 1024 * 1024

/**
 * What all the webhook replies being read at once may hold, together. One
 * reply may take MAX_WEBHOOK_RESPONSE_BYTES, but a token webhook is called
 * for any bearer token a stranger sends: sixty such requests answered with
 * huge replies held 3.8 GB. A reply that would pass this fails its call,
 * as one past its own bound does (the webhook's failure policy applies).
 */
export const MAX_BUFFERED_WEBHOOK_BYTES = 2 * MAX_WEBHOOK_RESPONSE_BYTES

let bufferedWebhookBytes = 0

/** The bytes of replies being read, kept against MAX_BUFFERED_WEBHOOK_BYTES; each reader gives back what it took. */
export const bufferedReplies = {
  /** Takes `bytes` more; false (nothing taken) when that would pass the shared bound. */
  take(bytes: number): boolean {
    if (bufferedWebhookBytes + bytes > MAX_BUFFERED_WEBHOOK_BYTES) return false
    bufferedWebhookBytes += bytes
    return true
  },
  give(bytes: number): void {
    bufferedWebhookBytes -= bytes
  },
}

/** The reason a reply is refused for the shared bound. */
export const sharedBoundExceeded = (): string => `webhook responses being read hold more than ${MAX_BUFFERED_WEBHOOK_BYTES} bytes`

/** The reason a reply is refused for its own bound. */
export const replyTooLarge = (maxBytes: number): string => `response larger than ${maxBytes} bytes`

/**
 * The body of a Web `Response` as text, read a chunk at a time: past
 * `maxBytes`, or past the shared bound, the rest is not read and the call
 * fails. `Response.text()` would read a reply sent without a length
 * (chunked, endless) whole before anything could look at its size.
 */
export async function readWebhookReply(response: Response, maxBytes = MAX_WEBHOOK_RESPONSE_BYTES): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {})
    throw new Error(`response of ${declared} bytes is too large`)
  }
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let held = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (held + value.length > maxBytes) throw new Error(replyTooLarge(maxBytes))
      if (!bufferedReplies.take(value.length)) throw new Error(sharedBoundExceeded())
      held += value.length
      chunks.push(value)
    }
    return new TextDecoder().decode(joinedBytes(chunks, held))
  } catch (err) {
    await reader.cancel().catch(() => {})
    throw err
  } finally {
    bufferedReplies.give(held)
  }
}
