/**
 * `--max-connection-bytes-per-sec`: each long-running stream to a node agent
 * (exec, attach, port-forward, pods/log) moves at most N bytes a second in
 * each direction, as upstream's upgrade-aware proxy wraps both halves of the
 * connection in a rate-limited reader and writer. A token bucket holding a
 * tenth of a second's worth lets small exchanges (a prompt, a keystroke) pass
 * at once while a bulk transfer settles at the rate. Nothing is buffered
 * here: a chunk is released piece by piece as tokens come, and the caller
 * reads the next chunk only once this one is through, so a fast sender is
 * held back by the stream's own backpressure.
 */

/** How long the bucket can save up for: a tenth of a second at the rate. */
const BURST_SECONDS = 0.1

export interface ByteThrottleClock {
  now(): number
  sleep(ms: number): Promise<void>
}

const realClock: ByteThrottleClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}

export class ByteThrottle {
  /** The bytes that may pass now. */
  private tokens: number
  private last: number
  readonly capacity: number
  /** What passed through, and how long it was held back in all: the throttle's own accounting. */
  bytes = 0
  waitedMs = 0

  constructor(
    readonly bytesPerSec: number,
    private readonly clock: ByteThrottleClock = realClock,
  ) {
    if (!(bytesPerSec > 0)) throw new Error('a byte throttle needs a positive rate')
    this.capacity = Math.max(1, Math.floor(bytesPerSec * BURST_SECONDS))
    this.tokens = this.capacity
    this.last = clock.now()
  }

  private refill(): void {
    const now = this.clock.now()
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.bytesPerSec)
    this.last = now
  }

  /** Resolves once `size` bytes may go; a size over the bucket is granted in bucket-sized steps. */
  async take(size: number): Promise<void> {
    let left = size
    while (left > 0) {
      const step = Math.min(left, this.capacity)
      this.refill()
      if (this.tokens < step) {
        const ms = Math.ceil(((step - this.tokens) / this.bytesPerSec) * 1000)
        this.waitedMs += ms
        await this.clock.sleep(ms)
        this.refill()
      }
      this.tokens -= step
      left -= step
      this.bytes += step
    }
  }

  /** Pieces of `chunk` no larger than the bucket, each once the bucket allows it. */
  async *pace(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < chunk.byteLength; at += this.capacity) {
      const piece = chunk.subarray(at, Math.min(chunk.byteLength, at + this.capacity))
      await this.take(piece.byteLength)
      yield piece
    }
  }
}

/**
 * `body` read at most `throttle.bytesPerSec` bytes a second: a pull stream,
 * so the next chunk is read from `body` only when the reader wants more and
 * the last one has gone out, and cancelling it cancels `body`.
 */
export function throttledBody(body: ReadableStream<Uint8Array>, throttle: ByteThrottle): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let pending: AsyncGenerator<Uint8Array> | undefined
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (pending) {
            const next = await pending.next()
            if (!next.done) return controller.enqueue(next.value)
            pending = undefined
          }
          const { done, value } = await reader.read()
          if (done) return controller.close()
          pending = throttle.pace(value)
        }
      },
      cancel(reason) {
        return reader.cancel(reason)
      },
    },
    { highWaterMark: 0 },
  )
}
