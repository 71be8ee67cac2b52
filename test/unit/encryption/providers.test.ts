/**
 * The providers' stored bytes, checked against upstream's format as
 * documented (not against this code): what this server writes is opened
 * here with node:crypto from the layout alone, and values built here in
 * that layout are read by the server.
 *
 * - aesgcm: `k8s:enc:aesgcm:v1:<key>:` nonce(12) ciphertext tag(16), the storage key as authenticated data
 * - aescbc: `k8s:enc:aescbc:v1:<key>:` iv(16) AES-256-CBC(PKCS#7-padded data)
 * - secretbox: `k8s:enc:secretbox:v1:<key>:` nonce(24) tag(16) XSalsa20 ciphertext
 */
import assert from 'node:assert/strict'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../../core/config/encryption.js'
import { EncryptionTransformers } from '../../../core/encryption/resource-transformers.js'
import { UnsupportedProviderError } from '../../../core/encryption/providers.js'
import { keyContext, type ValueTransformer } from '../../../core/storage/value/transformer.js'

const KEY = '/registry/secrets/default/s1'
const PLAIN = Buffer.from('{"kind":"Secret","apiVersion":"v1","data":{"password":"aHVudGVyMg=="}}')
const secretA = Buffer.alloc(32, 1)
const secretB = Buffer.alloc(32, 2)

const aes = (type: 'aesgcm' | 'aescbc' | 'secretbox', ...keys: [string, Buffer][]): EncryptionProvider => ({
  type,
  keys: keys.map(([name, secret]) => ({ name, secret: new Uint8Array(secret) })),
})
const identity: EncryptionProvider = { type: 'identity' }

function secretsWith(...providers: EncryptionProvider[]): ValueTransformer {
  const config: EncryptionConfiguration = { resources: [{ resources: [{ group: '', resource: 'secrets' }], providers }] }
  return new EncryptionTransformers(config).forResource({ group: '', resource: 'secrets' })
}

const write = async (t: ValueTransformer, key = KEY): Promise<Buffer> => Buffer.from(await t.toStorage(PLAIN, keyContext(key)))
const read = (t: ValueTransformer, stored: Buffer, key = KEY) => t.fromStorage(stored, keyContext(key))

function split(stored: Buffer, prefix: string): Buffer {
  assert.equal(stored.subarray(0, prefix.length).toString(), prefix)
  return stored.subarray(prefix.length)
}

describe('encryption providers: upstream bytes', () => {
  it('aesgcm writes prefix, 12-byte nonce, ciphertext and tag bound to the storage key', async () => {
    const stored = await write(secretsWith(aes('aesgcm', ['key1', secretA])))
    const body = split(stored, 'k8s:enc:aesgcm:v1:key1:')
    assert.equal(body.length, 12 + PLAIN.length + 16)
    const decipher = createDecipheriv('aes-256-gcm', secretA, body.subarray(0, 12))
    decipher.setAAD(Buffer.from(KEY))
    decipher.setAuthTag(body.subarray(body.length - 16))
    assert.deepEqual(Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]), PLAIN)
    assert.ok(!stored.includes(Buffer.from('aHVudGVyMg==')))
  })

  it('aesgcm reads a value made here in the format, and refuses it under another storage key', async () => {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-128-gcm', secretA.subarray(0, 16), nonce)
    cipher.setAAD(Buffer.from(KEY))
    const sealed = Buffer.concat([cipher.update(PLAIN), cipher.final(), cipher.getAuthTag()])
    const fixture = Buffer.concat([Buffer.from('k8s:enc:aesgcm:v1:k16:'), nonce, sealed])
    const t = secretsWith(aes('aesgcm', ['k16', secretA.subarray(0, 16)]))
    assert.deepEqual(Buffer.from((await read(t, fixture)).bytes), PLAIN)
    await assert.rejects(read(t, fixture, '/registry/secrets/default/other'), /cipher: message authentication failed/)
  })

  it('aescbc writes prefix, 16-byte IV and PKCS#7-padded CBC blocks', async () => {
    const stored = await write(secretsWith(aes('aescbc', ['k', secretA])))
    const body = split(stored, 'k8s:enc:aescbc:v1:k:')
    assert.equal(body.length, 16 + (Math.floor(PLAIN.length / 16) + 1) * 16)
    const decipher = createDecipheriv('aes-256-cbc', secretA, body.subarray(0, 16))
    assert.deepEqual(Buffer.concat([decipher.update(body.subarray(16)), decipher.final()]), PLAIN)
  })

  it('aescbc reads a value made here in the format', async () => {
    const iv = randomBytes(16)
    const cipher = createCipheriv('aes-256-cbc', secretB, iv)
    const fixture = Buffer.concat([Buffer.from('k8s:enc:aescbc:v1:k2:'), iv, cipher.update(PLAIN), cipher.final()])
    assert.deepEqual(Buffer.from((await read(secretsWith(aes('aescbc', ['k2', secretB])), fixture)).bytes), PLAIN)
  })

  it('secretbox writes prefix, 24-byte nonce, tag and XSalsa20 ciphertext that round-trips', async () => {
    const t = secretsWith(aes('secretbox', ['sb', secretA]))
    const stored = await write(t)
    assert.equal(split(stored, 'k8s:enc:secretbox:v1:sb:').length, 24 + 16 + PLAIN.length)
    assert.deepEqual(Buffer.from((await read(t, stored)).bytes), PLAIN)
  })

  it('secretbox reads a NaCl box of a known vector (key 0..31, nonce 100..123, "hello world")', async () => {
    // tag || ciphertext as NaCl's crypto_secretbox_easy (and Go's secretbox.Seal) lay it out.
    const box = Buffer.from('4e2c4b1cec5d0644ad46eaab00f38bed6adcf5a55596b986c29147', 'hex')
    const nonce = Buffer.from(Array.from({ length: 24 }, (_, i) => 100 + i))
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
    const fixture = Buffer.concat([Buffer.from('k8s:enc:secretbox:v1:v:'), nonce, box])
    const t = secretsWith(aes('secretbox', ['v', key]))
    assert.equal(Buffer.from((await read(t, fixture)).bytes).toString(), 'hello world')
    fixture[fixture.length - 1]! ^= 1
    await assert.rejects(read(t, fixture), /output array was not large enough for encryption/)
  })

  it('identity writes the bytes as they are and refuses a value marked as encrypted', async () => {
    const t = secretsWith(identity)
    assert.deepEqual(await write(t), PLAIN)
    await assert.rejects(read(t, Buffer.from('k8s:enc:aescbc:v1:k:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')), /identity transformer tried to read encrypted data/)
  })
})

describe('encryption providers: reading with every provider, writing with the first', () => {
  it('reads a value of an older key and marks it stale; the first key reads fresh', async () => {
    const old = await write(secretsWith(aes('aescbc', ['old', secretA])))
    const rotated = secretsWith(aes('aescbc', ['new', secretB], ['old', secretA]))
    const got = await read(rotated, old)
    assert.deepEqual(Buffer.from(got.bytes), PLAIN)
    assert.equal(got.stale, true)
    const fresh = await write(rotated)
    split(fresh, 'k8s:enc:aescbc:v1:new:')
    assert.equal((await read(rotated, fresh)).stale, false)
  })

  it('reads plaintext through a later identity provider (stale), and values of a later provider', async () => {
    const t = secretsWith(aes('secretbox', ['sb', secretA]), aes('aesgcm', ['g', secretB]), identity)
    assert.deepEqual(await read(t, PLAIN), { bytes: PLAIN, stale: true })
    const gcm = await write(secretsWith(aes('aesgcm', ['g', secretB])))
    assert.equal((await read(t, gcm)).stale, true)
  })

  it('tries a second entry of the same provider when the first has no such key', async () => {
    const v1 = await write(secretsWith(aes('aesgcm', ['one', secretA])))
    const t = secretsWith(aes('aesgcm', ['two', secretB]), aes('aesgcm', ['one', secretA]))
    assert.deepEqual(Buffer.from((await read(t, v1)).bytes), PLAIN)
  })

  it('fails, never returning ciphertext, for a value whose key was removed, with upstream wording', async () => {
    const v = await write(secretsWith(aes('aescbc', ['gone', secretA])))
    await assert.rejects(read(secretsWith(aes('aescbc', ['other', secretB])), v), { message: 'no matching key was found for the provided AES transformer' })
    await assert.rejects(read(secretsWith(aes('aescbc', ['other', secretB]), identity), v), {
      message: '[no matching key was found for the provided AES transformer, identity transformer tried to read encrypted data]',
    })
    await assert.rejects(read(secretsWith(aes('secretbox', ['s', secretB])), v), { message: 'no matching prefix found' })
  })

  it('refuses a kms provider at construction when no KMS transport is given, naming it', () => {
    assert.throws(
      () => secretsWith({ type: 'kms', apiVersion: 'v2', name: 'vault', endpoint: 'unix:///k.sock', socketPath: '/k.sock', timeoutMs: 3000 }),
      (err: unknown) => err instanceof UnsupportedProviderError && /kms provider "vault" \(apiVersion v2\) needs a KMS transport/.test(err.message),
    )
  })
})

describe('encryption rules: which resources', () => {
  const gr = (resource: string, group = '') => ({ group, resource })
  const provider = aes('aesgcm', ['k', secretA])
  const rules = new EncryptionTransformers({
    resources: [
      { resources: [gr('configmaps')], providers: [identity, provider] },
      { resources: [gr('deployments', 'apps')], providers: [aes('aescbc', ['c', secretA])] },
      { resources: [gr('*', 'apps')], providers: [aes('secretbox', ['s', secretA])] },
      { resources: [gr('*', '')], providers: [provider] },
      { resources: [gr('*', '*')], providers: [aes('aescbc', ['all', secretB])] },
    ],
  })
  const prefixOf = async (group: string, resource: string) => {
    const stored = Buffer.from(await rules.forResource(gr(resource, group)).toStorage(PLAIN, keyContext(KEY))).toString('latin1')
    return /^k8s:enc:\w+:v1:\w+:/.exec(stored)?.[0]
  }

  it('takes the first entry naming the resource, then its group wildcard, then *.*', async () => {
    assert.equal(await prefixOf('apps', 'deployments'), 'k8s:enc:aescbc:v1:c:')
    assert.equal(await prefixOf('apps', 'statefulsets'), 'k8s:enc:secretbox:v1:s:')
    assert.equal(await prefixOf('', 'secrets'), 'k8s:enc:aesgcm:v1:k:')
    assert.equal(await prefixOf('stable.example.com', 'crontabs'), 'k8s:enc:aescbc:v1:all:')
  })

  it('leaves a resource whose entry starts with identity in the clear, under a wider wildcard', async () => {
    assert.deepEqual(Buffer.from(await rules.forResource(gr('configmaps')).toStorage(PLAIN, keyContext(KEY))), PLAIN)
  })
})
