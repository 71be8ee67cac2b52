/**
 * The byte throttle of `--max-connection-bytes-per-sec` on a virtual clock:
 * a burst of a tenth of a second passes at once, more waits for its tokens,
 * a chunk larger than the bucket leaves in pieces, and a throttled body
 * reads its source only as fast as it is read itself.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ByteThrottle, type ByteThrottleClock, throttledBody } from '../../../core/proxy/byte-throttle.js'

function virtualClock(): ByteThrottleClock & { slept: number[] } {
  let now = 0
  const slept: number[] = []
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms)
      now += ms
    },
  }
}

describe('ByteThrottle', () => {
  it('lets a tenth of a second\'s worth through at once, then paces at the rate', async () => {
    const clock = virtualClock()
    const throttle = new ByteThrottle(1000, clock)
    assert.equal(throttle.capacity, 100)
    await throttle.take(100)
    assert.deepEqual(clock.slept, [])
    await throttle.take(50)
    assert.deepEqual(clock.slept, [50])
    assert.equal(throttle.bytes, 150)
    assert.equal(throttle.waitedMs, 50)
  })

  it('takes K bytes at N bytes a second in (K - burst) / N seconds of waiting', async () => {
    const clock = virtualClock()
    const throttle = new ByteThrottle(10_000, clock)
    await throttle.take(50_000)
    assert.equal(throttle.bytes, 50_000)
    // The first 1000 bytes came from the full bucket; the other 49 000 at 10 000 a second.
    assert.equal(throttle.waitedMs, 4900)
  })

  it('cuts a chunk larger than the bucket into pieces no larger than it, keeping every byte in order', async () => {
    const throttle = new ByteThrottle(40, virtualClock())
    const chunk = Uint8Array.from({ length: 10 }, (_, i) => i)
    const pieces: Uint8Array[] = []
    for await (const piece of throttle.pace(chunk)) pieces.push(piece)
    assert.deepEqual(
      pieces.map((p) => p.byteLength),
      [4, 4, 2],
    )
    assert.deepEqual([...pieces.flatMap((p) => [...p])], [...chunk])
  })

  it('refuses a rate that is not positive', () => {
    assert.throws(() => new ByteThrottle(0))
  })
})

describe('throttledBody', () => {
  it('delivers the whole body, paced, and reads the source only when asked', async () => {
    const clock = virtualClock()
    let pulled = 0
    const source = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (pulled === 5) return controller.close()
          pulled++
          controller.enqueue(new Uint8Array(300).fill(pulled))
        },
      },
      { highWaterMark: 0 },
    )
    const throttle = new ByteThrottle(1000, clock)
    const reader = throttledBody(source, throttle).getReader()
    const first = await reader.read()
    assert.equal(first.value?.byteLength, 100)
    // One chunk of the source is being paced out; nothing more was read ahead.
    assert.equal(pulled, 1)
    let total = first.value!.byteLength
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
    }
    assert.equal(total, 1500)
    assert.equal(throttle.bytes, 1500)
    assert.equal(throttle.waitedMs, 1400)
  })

  it('cancelling it cancels the source', async () => {
    let cancelled = false
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(10))
      },
      cancel() {
        cancelled = true
      },
    })
    const body = throttledBody(source, new ByteThrottle(1_000_000, virtualClock()))
    const reader = body.getReader()
    await reader.read()
    await reader.cancel()
    assert.equal(cancelled, true)
  })
})
