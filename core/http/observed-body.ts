/**
 * Watching a streamed answer's chunks and its end without a stream stage of
 * its own. The filters that outlive a watch (metrics, audit, tracing) used to
 * pipe its body through a TransformStream each; every event then crossed a
 * pipe (a writer's write, a transform, a reader's read and their promises)
 * per filter, which for one event to a thousand watchers cost more than the
 * socket writes. A body made by `observableStream` takes the filters' hooks
 * instead and calls them from its own pull; any other body is still piped,
 * with the same hooks called at the same moments.
 *
 * A runtime that writes to connections itself may also read an observable
 * body without its stream (`readDirectly`), instead of a stream's pull,
 * queue and read for each watcher. A watch's body can also be taken from
 * synchronously (`take`, with `whenReady` to hear when to take again): an
 * event then goes from the watcher to the connection's write with no
 * promise at all, the consumer woken once per turn however many came.
 */

export interface BodyObserver {
  /** Each chunk as it is handed on, before the consumer has it. */
  onChunk?: (bytes: number) => void
  /** The body ended on its own (a TransformStream's flush). */
  onClose?: () => void
  /** The consumer cancelled it (the client went away). */
  onCancel?: () => void
}

const observersOf = new WeakMap<ReadableStream<Uint8Array>, BodyObserver[]>()
const sourceOf = new WeakMap<ReadableStream<Uint8Array>, ObservedSource>()

/** Where an observable body's source reports what happens to it. */
export interface ObservedSource {
  /** The next chunk, or undefined once the body ends. */
  pull(): Promise<Uint8Array | undefined>
  cancel(): void
  /**
   * Optional, with `whenReady`: the next chunk if one is ready now,
   * undefined once the body ends, null when there is none yet.
   */
  take?(): Uint8Array | undefined | null
  /** Calls `listener` once, when `take()` has something again; it must only note that and come back. */
  whenReady?(listener: () => void): void
}

/** A body whose observers are called directly; one stream stage, however many filters watch it. */
export function observableStream(source: ObservedSource): ReadableStream<Uint8Array> {
  const observers: BodyObserver[] = []
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await source.pull()
        if (chunk === undefined) {
          controller.close()
          for (const o of observers) o.onClose?.()
          return
        }
        for (const o of observers) o.onChunk?.(chunk.byteLength)
        controller.enqueue(chunk)
      },
      cancel() {
        source.cancel()
        for (const o of observers) o.onCancel?.()
      },
    },
    // Nothing is pulled before the consumer reads: the filters attach their observers after the handler
    // made the body, and a chunk ready at once (a LIST's first run of items) must not pass them unseen.
    { highWaterMark: 0 },
  )
  observersOf.set(stream, observers)
  sourceOf.set(stream, source)
  return stream
}

type Takeable<T> = T & Required<Pick<ObservedSource, 'take' | 'whenReady'>>

/** A source or body whose chunks can be taken when ready, without a promise each. */
export function canTake<T extends ObservedSource | DirectBody>(body: T): body is Takeable<T> {
  return body.take !== undefined && body.whenReady !== undefined
}

/** An observable body read without its stream; the observers hear the same as from a stream's reader. */
export interface DirectBody {
  /** The next chunk, or undefined once the body ended. One call at a time. */
  pull(): Promise<Uint8Array | undefined>
  /** The consumer went away. */
  cancel(): void
  /**
   * Present when the source has them (a watch): as `pull` without a promise,
   * null when nothing is ready yet, then `whenReady` tells when to take again.
   */
  take?(): Uint8Array | undefined | null
  whenReady?(listener: () => void): void
}

/**
 * `body`'s source, for a consumer that writes each chunk itself; undefined
 * for a body that is not observable or is already being read. The stream is
 * locked, so nothing else reads it.
 */
export function readDirectly(body: ReadableStream<Uint8Array>): DirectBody | undefined {
  const source = sourceOf.get(body)
  const observers = observersOf.get(body)
  if (!source || !observers || body.locked) return undefined
  body.getReader()
  let ended = false
  // What the observers hear of a chunk the source gave (undefined: the end), passed on.
  const observed = (chunk: Uint8Array | undefined): Uint8Array | undefined => {
    if (chunk === undefined) {
      ended = true
      for (const o of observers) o.onClose?.()
      return undefined
    }
    for (const o of observers) o.onChunk?.(chunk.byteLength)
    return chunk
  }
  return {
    async pull() {
      return ended ? undefined : observed(await source.pull())
    },
    cancel() {
      if (ended) return
      ended = true
      source.cancel()
      for (const o of observers) o.onCancel?.()
    },
    ...(canTake(source)
      ? {
          take(): Uint8Array | undefined | null {
            if (ended) return undefined
            const chunk = source.take()
            return chunk === null ? null : observed(chunk)
          },
          whenReady(listener: () => void): void {
            if (ended) listener()
            else source.whenReady(listener)
          },
        }
      : {}),
  }
}

/**
 * `body` with `observer` told of its chunks and its end: the same body when
 * it is observable, else the body piped through a stage that calls it.
 */
export function observeBody(body: ReadableStream<Uint8Array>, observer: BodyObserver): ReadableStream<Uint8Array> {
  const observers = observersOf.get(body)
  if (observers && !body.locked) {
    observers.push(observer)
    return body
  }
  // `cancel` (a client that goes away) is in the streams standard, not yet in TypeScript's lib.
  const transformer = {
    transform(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>) {
      observer.onChunk?.(chunk.byteLength)
      controller.enqueue(chunk)
    },
    flush: () => observer.onClose?.(),
    cancel: () => observer.onCancel?.(),
  }
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(transformer))
}
