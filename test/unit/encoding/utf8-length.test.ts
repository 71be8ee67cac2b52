import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { utf8Length, utf8LengthUpTo } from '../../../core/machinery/utf8-length.js'

describe('utf8Length', () => {
  it('counts the bytes TextEncoder writes: ASCII, two- and three-byte characters, pairs and lone surrogates', () => {
    const encoder = new TextEncoder()
    const texts = ['', 'plain', 'ü', 'µs', '€ and ✓', '😀', 'a😀b', '\ud83d', 'x\udc00y', '\ud83d\ud83d\ude00', 'end\ud83d']
    for (const text of texts) assert.equal(utf8Length(text), encoder.encode(text).byteLength, JSON.stringify(text))
  })
})

describe('utf8LengthUpTo', () => {
  it('is the exact length up to the limit, and above the limit past it, without counting a long text whole', () => {
    const encoder = new TextEncoder()
    for (const text of ['', 'plain', 'é'.repeat(100), '€✓'.repeat(50), '😀'.repeat(40), 'a😀b\ud83d']) {
      const exact = encoder.encode(text).byteLength
      for (const limit of [0, 1, exact - 1, exact, exact + 1, 1000]) {
        const counted = utf8LengthUpTo(text, limit)
        if (exact <= limit) assert.equal(counted, exact, `${JSON.stringify(text)} within ${limit}`)
        else assert.ok(counted > limit, `${JSON.stringify(text)} past ${limit}: ${counted}`)
      }
    }
  })
})
