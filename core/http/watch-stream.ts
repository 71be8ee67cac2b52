/**
 * A watch as a response body: one JSON object per line, flushed per event,
 * produced on demand (pull) so a slow client holds back no one else.
 */
import { watchEventJson } from '../encoding/api-json.js'
import { EncodingMemo } from '../encoding/immutable.js'
import { isPollable, StorageError, type StorageEvent, type Watcher } from '../storage/interface.js'
import { asStatusError, StatusError } from '../machinery/status-error.js'
import { observableStream } from './observed-body.js'

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

/**
 * An immutable (cached) object's event lines by type, made once for every
 * watcher it goes to; the bytes are only ever read (written to sockets).
 */
const eventLines = new EncodingMemo<Map<string, Uint8Array>>()

function eventLine(type: string, object: unknown): Uint8Array {
  const lines = eventLines.of(object, () => new Map<string, Uint8Array>())
  let bytes = lines.get(type)
  if (bytes === undefined) {
    bytes = line(type, object)
    lines.set(type, bytes)
  }
  return bytes
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
  const encode = (next: IteratorResult<StorageEvent, undefined>): Uint8Array | undefined => {
    if (next.done) {
      finish()
      return undefined
    }
    const bytes = eventLine(next.value.type, encodeObject(next.value))
    onEvent?.(bytes.byteLength)
    return bytes
  }
  const failed = (err: unknown): Uint8Array => {
    finish()
    return line('ERROR', errorFor(err).toStatus())
  }
  // Observable: the filters that outlive the watch (metrics, audit, tracing) hook in without a stream stage each.
  return observableStream({
    async pull() {
      if (ended) return undefined
      try {
        return encode(await iterator.next())
      } catch (err) {
        return failed(err)
      }
    },
    cancel() {
      finish()
    },
    // A watcher that can be polled is read without a promise per event by a consumer that writes each itself.
    ...(isPollable(watcher)
      ? {
          take(): Uint8Array | undefined | null {
            if (ended) return undefined
            try {
              const next = watcher.poll()
              return next ? encode(next) : null
            } catch (err) {
              return failed(err)
            }
          },
          whenReady(listener: () => void): void {
            if (ended) listener()
            else watcher.whenReady(listener)
          },
        }
      : {}),
  })
}
