import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { constantTimeEqual, secretDigest } from '../../../core/authn/constant-time.js'

describe('secret comparison', () => {
  it('finds equal only the very same bytes', () => {
    assert.equal(constantTimeEqual('s3cret', 's3cret'), true)
    for (const guess of ['s3cres', 'S3cret', 's3cre', 's3crett', '', 's3cret\u0000']) assert.equal(constantTimeEqual('s3cret', guess), false, guess)
  })

  it('files a secret under its SHA-256, in hex', async () => {
    assert.equal(secretDigest('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.notEqual(secretDigest('abc'), secretDigest('abd'))
  })
})
