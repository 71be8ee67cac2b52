import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import { constantTimeEqual, javascriptSha256Hex, secretDigest } from '../../../core/authn/constant-time.js'
import { nativeSha256Hex } from '../../../runtimes/node/adapter/native-sha256.js'

describe('secret comparison', () => {
  it('finds equal only the very same characters', () => {
    assert.equal(constantTimeEqual('s3cret', 's3cret'), true)
    for (const guess of ['s3cres', 'S3cret', 's3cre', 's3crett', '', 's3cret\u0000']) assert.equal(constantTimeEqual('s3cret', guess), false, guess)
    assert.equal(constantTimeEqual('gr\u00fc\u00df-\u{1f511}', 'gr\u00fc\u00df-\u{1f511}'), true)
    // Two lone surrogates, which UTF-8 encoding would both turn into U+FFFD.
    assert.equal(constantTimeEqual('\ud800', '\udc00'), false)
  })

  it('files a secret under its SHA-256, in hex', async () => {
    assert.equal(secretDigest('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.notEqual(secretDigest('abc'), secretDigest('abd'))
    // Beyond ASCII, the digest is of the UTF-8 bytes: SHA-256 of "\u00e9" (c3 a9).
    assert.equal(secretDigest('\u00e9'), createHash('sha256').update('\u00e9', 'utf8').digest('hex'))
    const long = `t0k-${'\u00fc'.repeat(40)}-\u{1f511}`
    assert.equal(secretDigest(long), createHash('sha256').update(long, 'utf8').digest('hex'))
  })

  it("digests as the runtime's own SHA-256, which the daemon and Node's library script put in its place, does", () => {
    assert.ok(nativeSha256Hex, "Node's node:crypto has a one-shot hash")
    // ASCII, beyond ASCII, a lone surrogate (U+FFFD in UTF-8 either way), a JWT's length.
    for (const text of ['', 'abc', '\u00e9', `t0k-${'\u00fc'.repeat(40)}-\u{1f511}`, 'a\ud800b', 'e'.repeat(1000)]) {
      assert.equal(nativeSha256Hex!(text), javascriptSha256Hex(text), JSON.stringify(text))
    }
  })
})
