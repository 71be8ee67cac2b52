import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { utf8Length } from '../../../core/encoding/utf8-length.js'

describe('utf8Length', () => {
  it('counts the bytes TextEncoder writes: ASCII, two- and three-byte characters, pairs and lone surrogates', () => {
    const encoder = new TextEncoder()
    const texts = ['', 'plain', 'ü', 'µs', '€ and ✓', '😀', 'a😀b', '\ud83d', 'x\udc00y', '\ud83d\ud83d\ude00', 'end\ud83d']
    for (const text of texts) assert.equal(utf8Length(text), encoder.encode(text).byteLength, JSON.stringify(text))
  })
})
