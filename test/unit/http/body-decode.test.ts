import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { decodeJsonWithin, decodeUtf8, readBodyBytes } from '../../../core/http/body.js'

const KiB = 1024

/** Bytes of a body that is mostly one repeated character, with `tail` appended. */
function repeated(char: string, bytes: number, tail: Uint8Array = new Uint8Array()): Uint8Array {
  const one = new TextEncoder().encode(char)
  const out = new Uint8Array(Math.floor(bytes / one.length) * one.length + tail.length)
  for (let at = 0; at + one.length <= out.length - tail.length; at += one.length) out.set(one, at)
  out.set(tail, out.length - tail.length)
  return out
}

describe('a request body decoded in steps', () => {
  it('reads what TextDecoder reads, characters cut at every step boundary included', async () => {
    // One-, two-, three- and four-byte characters, so that some fall across each 32 KiB boundary.
    for (const char of ['x', 'é', '€', '🙂']) {
      for (const offset of [0, 1, 2, 3]) {
        const bytes = repeated(char, 200 * KiB + offset)
        assert.equal(await decodeUtf8(bytes), new TextDecoder().decode(bytes), `${char} at offset ${offset}`)
      }
    }
  })

  it('keeps a leading byte-order mark (JSON refuses it, as Go does) and replaces invalid bytes as TextDecoder does, at any size', async () => {
    const pieces = fc.array(
      fc.oneof(fc.constant([0xef, 0xbb, 0xbf]), fc.constant([0xff]), fc.constant([0xc3]), fc.constant([0xe2, 0x82]), fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 40 })),
      { maxLength: 20 },
    )
    await fc.assert(
      fc.asyncProperty(pieces, fc.integer({ min: 0, max: 70 * KiB }), async (parts, padding) => {
        const head = Uint8Array.from(parts.flat())
        const bytes = new Uint8Array(padding + head.length * 2)
        bytes.set(head, 0)
        bytes.fill(0x61, head.length, head.length + padding)
        bytes.set(head, head.length + padding)
        assert.equal(await decodeUtf8(bytes), new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes))
      }),
      { numRuns: 60, seed: 14 },
    )
  })

  it('joins a body that arrives in many chunks', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => new Uint8Array(16 * KiB).fill(i))
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        controller.close()
      },
    })
    const body = await readBodyBytes(new Request('http://x/', { method: 'POST', body: stream, duplex: 'half' } as RequestInit), 1024 * KiB)
    assert.equal(body.byteLength, 40 * 16 * KiB)
    for (let i = 0; i < 40; i++) assert.equal(body[i * 16 * KiB], i)
  })
})

describe('a JSON body with an escaped half of a surrogate pair', () => {
  it('holds U+FFFD in its place, in values and keys, whole pairs kept, whether parsed at once or in slices', async () => {
    for (const padding of [0, 100 * KiB]) {
      const text = `{"a\\udc00":"x\\ud800","list":["\\udfff\\ud83d\\ude00"],"__proto__":{"b":"\\ud800y"},"pad":"${'p'.repeat(padding)}"}`
      const { value } = await decodeJsonWithin(text, '', false)
      const v = value as Record<string, unknown>
      assert.deepEqual(Object.keys(v), ['a\ufffd', 'list', '__proto__', 'pad'], `padding ${padding}`)
      assert.equal(v['a\ufffd'], 'x\ufffd')
      assert.deepEqual(v['list'], ['\ufffd\u{1F600}'])
      assert.equal(Object.getPrototypeOf(v), Object.prototype, '__proto__ stays an own field')
      assert.deepEqual(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, { b: '\ufffdy' })
    }
  })
})
