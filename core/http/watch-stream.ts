/**
 * A watch as a response body: one JSON object per line, flushed per event,
 * produced on demand (pull) so a slow client holds back no one else.
 */
import { watchEventJson } from '../encoding/api-json.js'
import type { StorageEvent, Watcher } from '../storage/interface.js'
import { StorageError } from '../storage/interface.js'
import { asStatusError, StatusError } from '../machinery/status-error.js'

export interface WatchStreamOptions {
  watcher: Watcher
  /** Turns a storage event's object into what this client asked for (JSON object, Table ...). */
  encodeObject: (event: StorageEvent) => unknown
  /** Ends the watch (server side timeout, shutdown, client gone). */
  signal: AbortSignal
  /** Called once when the stream ends for any reason. */
  onEnd?: () => void
  /** Told of each event sent, with its size in bytes (the watch metrics). */
  onEvent?: (bytes: number) => void
}

const encoder = new TextEncoder()

/** One event, written as upstream's watch encoder writes it (Go's field order, a newline after each). */
function line(type: string, object: unknown): Uint8Array {
  return encoder.encode(watchEventJson(type, object))
}

function errorFor(err: unknown): StatusError {
  if (err instanceof StorageError && err.code === 'Compacted') return new StatusError(410, 'Expired', err.message)
  return asStatusError(err)
}

export function watchStream({ watcher, encodeObject, signal, onEnd, onEvent }: WatchStreamOptions): ReadableStream<Uint8Array> {
  const iterator = watcher[Symbol.asyncIterator]()
  const stop = () => watcher.stop()
  signal.addEventListener('abort', stop, { once: true })
  let ended = false
  const finish = () => {
    if (ended) return
    ended = true
    signal.removeEventListener('abort', stop)
    watcher.stop()
    onEnd?.()
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next()
        if (next.done) {
          finish()
          controller.close()
          return
        }
        const bytes = line(next.value.type, encodeObject(next.value))
        onEvent?.(bytes.byteLength)
        controller.enqueue(bytes)
      } catch (err) {
        controller.enqueue(line('ERROR', errorFor(err).toStatus()))
        finish()
        controller.close()
      }
    },
    cancel() {
      finish()
    },
  })
}
