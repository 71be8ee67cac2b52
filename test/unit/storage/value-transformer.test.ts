/**
 * The value transformer stage with a nonce-based transformer (AES-GCM from
 * Web Crypto, a test key): values round-trip, are stored as ciphertext bound
 * to their key, and an unchanged object needs no rewrite unless its read
 * was stale.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jsonCodec } from '../../../core/storage/codec.js'
import { mustWrite, StoredValues } from '../../../core/storage/value/stored-values.js'
import { identityTransformer, type ValueTransformer } from '../../../core/storage/value/transformer.js'

async function aesGcm(staleOnRead = false): Promise<ValueTransformer> {
  const key = await crypto.subtle.importKey('raw', new Uint8Array(32).fill(7), 'AES-GCM', false, ['encrypt', 'decrypt'])
  return {
    async toStorage(bytes, ctx) {
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: ctx.authenticatedData }, key, bytes))
      return new Uint8Array([...iv, ...sealed])
    },
    async fromStorage(bytes, ctx) {
      const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, 12), additionalData: ctx.authenticatedData }, key, bytes.slice(12))
      return { bytes: new Uint8Array(plain), stale: staleOnRead }
    },
  }
}

const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { password: 'aHVudGVyMg==' } }
const KEY = '/registry/secrets/default/s'

describe('the value transformer stage', () => {
  it('round-trips through a nonce-based transformer and stores no plaintext', async () => {
    const transformer = await aesGcm()
    const values = new StoredValues(jsonCodec, () => transformer)
    const { stored } = await values.encode(KEY, secret)
    assert.ok(!new TextDecoder().decode(stored).includes('aHVudGVyMg=='))
    assert.deepEqual((await values.decode(KEY, stored)).object, secret)
  })

  it('binds the value to its key: read under another key it fails', async () => {
    const transformer = await aesGcm()
    const values = new StoredValues(jsonCodec, () => transformer)
    const { stored } = await values.encode(KEY, secret)
    await assert.rejects(values.decode('/registry/secrets/default/other', stored))
  })

  it('needs no rewrite of unchanged content although the stored bytes differ each time, unless the read was stale', async () => {
    const transformer = await aesGcm()
    const values = new StoredValues(jsonCodec, () => transformer)
    const first = await values.encode(KEY, secret)
    const second = await values.encode(KEY, secret)
    assert.notDeepEqual(first.stored, second.stored)
    const read = await values.decode(KEY, first.stored)
    assert.equal(mustWrite(read, second.plain), false)
    assert.equal(mustWrite(read, (await values.encode(KEY, { ...secret, data: { password: 'eA==' } })).plain), true)
    const stale = await aesGcm(true)
    const staleValues = new StoredValues(jsonCodec, () => stale)
    assert.equal(mustWrite(await staleValues.decode(KEY, first.stored), second.plain), true)
  })

  it('leaves the codec bytes as they are with the identity transformer', async () => {
    const values = new StoredValues(jsonCodec, () => identityTransformer)
    const { plain, stored } = await values.encode(KEY, secret)
    assert.deepEqual(stored, plain)
  })
})
