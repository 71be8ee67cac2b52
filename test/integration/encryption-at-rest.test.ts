/**
 * Encryption at rest through createApiServer on the in-memory store, which
 * then holds only the transformed bytes: what is stored for a Secret starts
 * with upstream's prefix and holds no plaintext, while every API read sees
 * the object; rotation to a new first key rewrites a value on its next
 * write (even an unchanged replace); a removed key makes reads of its
 * values a 500 naming the key while other values stay readable (KMS
 * providers: kms-encryption.test.ts).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../core/config/encryption.js'
import { encryptionKeyTransformers } from '../../core/encryption/resource-transformers.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import type { KeyTransformers } from '../../core/storage/value/key-transformers.js'
import { createTestServer, TestClient } from './harness.js'

const SECRETS = '/api/v1/namespaces/default/secrets'
const PASSWORD = Buffer.from('correct horse battery staple').toString('base64')
const aescbc = (name: string, fill: number): EncryptionProvider => ({ type: 'aescbc', keys: [{ name, secret: new Uint8Array(32).fill(fill) }] })
const secretsWith = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({
  resources: [{ resources: [{ group: '', resource: 'secrets' }], providers }],
})

/** A memory store whose transformers the test can swap, as a restart with another file would. */
function store(config: EncryptionConfiguration) {
  let current: KeyTransformers = encryptionKeyTransformers(config)
  const storage = new MemoryStorage({ transformerFor: (key) => current.forKey(key) })
  return {
    storage,
    async serve(next?: EncryptionConfiguration): Promise<TestClient> {
      if (next) current = encryptionKeyTransformers(next)
      const server = createTestServer({ watchCache: false }, { storage, valueTransformers: current })
      await server.ready
      return new TestClient(server)
    },
    held: (name: string): string => Buffer.from(storage.heldValue(`/registry/secrets/default/${name}`) as Uint8Array).toString('latin1'),
  }
}

describe('encryption at rest (in-process, memory store)', () => {
  it('stores a Secret only as aescbc ciphertext with its prefix; reads, lists and configmaps are unaffected', async () => {
    const s = store(secretsWith(aescbc('key1', 1)))
    const client = await s.serve()
    assert.equal((await client.post(SECRETS, { metadata: { name: 'db' }, data: { password: PASSWORD } })).status, 201)
    const held = s.held('db')
    assert.ok(held.startsWith('k8s:enc:aescbc:v1:key1:'), held.slice(0, 30))
    assert.ok(!held.includes(PASSWORD) && !held.includes('"db"'))
    assert.equal((await client.get(`${SECRETS}/db`)).body.data.password, PASSWORD)
    assert.deepEqual((await client.get(SECRETS)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['db'])
    assert.equal((await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'plain' }, data: { a: 'b' } })).status, 201)
    const cm = s.storage.heldValue('/registry/configmaps/default/plain') as Uint8Array
    assert.ok(Buffer.from(cm).toString().startsWith('{'), 'not covered by a rule: stored as the codec writes it')
  })

  it('after rotation to a new first key, an unchanged replace rewrites the value with it and the old key still reads', async () => {
    const s = store(secretsWith(aescbc('key1', 1)))
    const first = await s.serve()
    await first.post(SECRETS, { metadata: { name: 'a' }, data: { password: PASSWORD } })
    await first.post(SECRETS, { metadata: { name: 'b' }, data: { password: PASSWORD } })
    const rotated = await s.serve(secretsWith(aescbc('key2', 2), aescbc('key1', 1)))
    const a = (await rotated.get(`${SECRETS}/a`)).body
    assert.equal(a.data.password, PASSWORD, 'read with the second provider')
    const replaced = await rotated.put(`${SECRETS}/a`, a)
    assert.equal(replaced.status, 200, replaced.text)
    assert.notEqual(replaced.body.metadata.resourceVersion, a.metadata.resourceVersion, 'a stale value is written although nothing changed')
    assert.ok(s.held('a').startsWith('k8s:enc:aescbc:v1:key2:'))
    assert.ok(s.held('b').startsWith('k8s:enc:aescbc:v1:key1:'), 'untouched until written')
  })

  it('answers 500 naming the key for a value whose key was removed; other values stay readable and the server stays up', async () => {
    const s = store(secretsWith(aescbc('old', 1)))
    await (await s.serve()).post(SECRETS, { metadata: { name: 'lost' }, data: { password: PASSWORD } })
    const client = await s.serve(secretsWith(aescbc('new', 3)))
    assert.equal((await client.post(SECRETS, { metadata: { name: 'fresh' }, data: { password: PASSWORD } })).status, 201)
    const lost = await client.get(`${SECRETS}/lost`)
    assert.equal(lost.status, 500)
    assert.equal(lost.body.reason, 'InternalError')
    assert.equal(
      lost.body.message,
      'Internal error occurred: unable to transform key "/registry/secrets/default/lost": no matching key was found for the provided AES transformer',
    )
    assert.ok(!lost.text.includes(PASSWORD))
    assert.equal((await client.get(`${SECRETS}/fresh`)).body.data.password, PASSWORD)
    assert.equal((await client.get(SECRETS)).status, 500, 'a list that meets it fails rather than hide it')
    assert.equal((await client.get('/healthz')).status, 200)
  })

  it('builds transformers for options.encryption with the default store, and refuses a given storage without them', async () => {
    const server = createTestServer({ encryption: secretsWith(aescbc('k', 4)), watchCache: false })
    await server.ready
    const client = new TestClient(server)
    assert.equal((await client.post(SECRETS, { metadata: { name: 's' }, data: { password: PASSWORD } })).status, 201)
    assert.equal((await client.get(`${SECRETS}/s`)).body.data.password, PASSWORD)
    assert.throws(() => createTestServer({ encryption: secretsWith(aescbc('k', 4)) }, { storage: new MemoryStorage() }), /ports\.valueTransformers/)
  })
})
