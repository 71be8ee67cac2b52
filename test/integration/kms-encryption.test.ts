/**
 * KMS providers through createApiServer on the in-memory store, with a
 * real KMS plugin (gRPC on a unix socket) the test starts: the stored
 * bytes of KMS v2 and v1 are upstream's formats, opened here by test-side
 * code from the format description with the plugin's key; values written
 * here in upstream's formats read back; a v2 seed is reused across writes
 * and replaced when the plugin's key ID changes; a plugin that goes down
 * turns its health check red and makes reads and writes that need it a
 * 500 (never garbage, the server up), and everything works again when it
 * comes back.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../core/config/encryption.js'
import { EncryptionAtRest } from '../../core/encryption/encryption-at-rest.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { KeyTransformers } from '../../core/storage/value/key-transformers.js'
import { identityTransformer, type ValueTransformer } from '../../core/storage/value/transformer.js'
import { nodeKmsClients } from '../../runtimes/node/daemon/kms-clients.js'
import { createTestServer, TestClient } from './harness.js'
import { startKmsPlugin, type TestKmsPlugin } from './kms-plugin.js'
import { cbcSeal, gcmOpen, gcmSeal, parseV2, seededOpen, seededSeal, splitV1, writeV2 } from './kms-upstream-format.js'

const SECRETS = '/api/v1/namespaces/default/secrets'
const PASSWORD = Buffer.from('correct horse battery staple').toString('base64')
// Health answers never reused and no background polling: each check asks the plugin.
const FRESH = { healthyTtlMs: 0, unhealthyTtlMs: 0, pollHealthyMs: 3_600_000, pollUnhealthyMs: 3_600_000 }

describe('KMS providers (in-process, memory store, real plugin)', () => {
  let plugin: TestKmsPlugin
  const opened: EncryptionAtRest[] = []
  before(async () => {
    plugin = await startKmsPlugin()
  })
  after(async () => {
    for (const e of opened) e.close()
    await plugin.close()
  })

  const kms = (apiVersion: 'v1' | 'v2', name: string, extra: { cacheSize?: number } = {}): EncryptionProvider => ({
    type: 'kms',
    apiVersion,
    name,
    endpoint: plugin.endpoint,
    socketPath: plugin.socketPath,
    timeoutMs: 5000,
    ...extra,
  })
  const secretsWith = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({
    resources: [{ resources: [{ group: '', resource: 'secrets' }], providers }],
  })

  /** A memory store whose transformers each `serve` replaces, as a restarted server would (with empty caches). */
  function store() {
    let current: KeyTransformers | undefined
    const storage = new MemoryStorage({ transformerFor: (key) => current!.forKey(key) })
    return {
      storage,
      async serve(transformers: KeyTransformers): Promise<TestClient> {
        current = transformers
        const server = createTestServer({ watchCache: false }, { storage, valueTransformers: transformers })
        await server.ready
        return new TestClient(server)
      },
      encryption(config: EncryptionConfiguration): EncryptionAtRest {
        const e = new EncryptionAtRest(config, { kms: nodeKmsClients, kmsTimings: FRESH })
        opened.push(e)
        return e
      },
      held: (name: string): Buffer => Buffer.from(storage.heldValue(`/registry/secrets/default/${name}`) as Uint8Array),
    }
  }

  /** Transformers that store every Secret through `writer` (fixtures in upstream's format). */
  const writing = (writer: (plain: Buffer, key: string) => Buffer): KeyTransformers =>
    new KeyTransformers(({ resource }): ValueTransformer =>
      resource !== 'secrets'
        ? identityTransformer
        : {
            toStorage: async (bytes, ctx) => writer(Buffer.from(bytes), Buffer.from(ctx.authenticatedData).toString()),
            fromStorage: async () => {
              throw new Error('write-only')
            },
          },
    )

  it('v2 stores an EncryptedObject under k8s:enc:kms:v2:<name>: that the plugin key and the format open; one seed serves many writes', async () => {
    const s = store()
    const encryptsBefore = plugin.calls.encrypt
    const client = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'))))
    for (const name of ['a', 'b', 'c']) assert.equal((await client.post(SECRETS, { metadata: { name }, data: { password: PASSWORD } })).status, 201)
    assert.equal(plugin.calls.encrypt - encryptsBefore, 1, 'the seed obtained at start-up encrypts every write')
    const held = s.held('a')
    const prefix = 'k8s:enc:kms:v2:vault:'
    assert.equal(held.subarray(0, prefix.length).toString(), prefix)
    assert.ok(!held.includes(PASSWORD) && !held.includes('"a"'))
    const o = parseV2(held.subarray(prefix.length))
    assert.equal(o.keyId, 'key-1')
    assert.equal(o.type, 1, 'HKDF_SHA256_XNONCE_AES_GCM_SEED')
    assert.equal(o.annotations['wrapped-by.kms.example.com']?.toString(), 'test')
    const seed = plugin.unwrap(o.encryptedDEKSource)
    assert.equal(seed.length, 32)
    const plain = seededOpen(seed, o.encryptedData, '/registry/secrets/default/a')
    assert.equal(JSON.parse(plain.toString()).data.password, PASSWORD)
    assert.deepEqual(parseV2(s.held('b').subarray(prefix.length)).encryptedDEKSource, o.encryptedDEKSource, 'same seed')
    assert.throws(() => seededOpen(seed, o.encryptedData, '/registry/secrets/default/b'), 'bound to its key')
    assert.equal((await client.get(`${SECRETS}/a`)).body.data.password, PASSWORD)
    assert.equal((await client.get(SECRETS)).body.items.length, 3)
  })

  it('v2 alone is checked as kms-providers on /healthz, /livez and /readyz', async () => {
    const s = store()
    const client = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'))))
    for (const endpoint of ['healthz', 'livez', 'readyz']) {
      assert.equal((await client.get(`/${endpoint}/kms-providers`)).text, 'ok')
      assert.equal((await client.get(`/${endpoint}/kms-provider-0`)).status, 404)
    }
    assert.match((await client.get('/healthz?verbose')).text, /\[\+\]kms-providers ok/)
  })

  it('v2 replaces the seed when the key ID changes; a value under the old key reads, is stale, and a replace moves it', async () => {
    const s = store()
    const client = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'))))
    await client.post(SECRETS, { metadata: { name: 'old' }, data: { password: PASSWORD } })
    const prefix = 'k8s:enc:kms:v2:vault:'.length
    plugin.keyId = 'key-2'
    try {
      assert.equal((await client.get('/healthz/kms-providers')).status, 200, 'the check sees key-2 and rotates')
      await client.post(SECRETS, { metadata: { name: 'new' }, data: { password: PASSWORD } })
      assert.equal(parseV2(s.held('new').subarray(prefix)).keyId, 'key-2')
      const old = (await client.get(`${SECRETS}/old`)).body
      assert.equal(old.data.password, PASSWORD)
      const replaced = await client.put(`${SECRETS}/old`, old)
      assert.equal(replaced.status, 200, replaced.text)
      assert.notEqual(replaced.body.metadata.resourceVersion, old.metadata.resourceVersion, 'stale: written although unchanged')
      assert.equal(parseV2(s.held('old').subarray(prefix)).keyId, 'key-2')
    } finally {
      plugin.keyId = 'key-1'
    }
  })

  it('a plugin that goes down: health red, reads and writes that need it 500 with nothing stored, and all well once it is back', async () => {
    const s = store()
    const first = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'))))
    await first.post(SECRETS, { metadata: { name: 'kept' }, data: { password: PASSWORD } })
    await plugin.stop()
    try {
      const health = await first.get('/healthz/kms-providers')
      assert.equal(health.status, 500)
      assert.match(health.text, /failed to perform status section of the healthz check for KMS Provider vault/)
      assert.equal((await first.get('/readyz')).status, 500)
      // A server started while the plugin is down has no seed and no cached DEK.
      const restarted = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'))))
      const read = await restarted.get(`${SECRETS}/kept`)
      assert.equal(read.status, 500)
      assert.equal(read.body.reason, 'InternalError')
      assert.match(read.body.message, /^Internal error occurred: unable to transform key "\/registry\/secrets\/default\/kept": /)
      assert.ok(!read.text.includes(PASSWORD))
      const write = await restarted.post(SECRETS, { metadata: { name: 'refused' }, data: { password: PASSWORD } })
      assert.equal(write.status, 500, write.text)
      assert.equal(s.storage.heldValue('/registry/secrets/default/refused'), undefined, 'nothing stored')
      assert.equal((await restarted.get('/api/v1/namespaces/default/configmaps')).status, 200, 'the rest of the server serves')

      await plugin.start()
      // The client reconnects after its backoff; no timing is asserted, only that it comes back.
      for (let i = 0; i < 300 && (await restarted.get('/healthz/kms-providers')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100))
      assert.equal((await restarted.get('/healthz/kms-providers')).status, 200)
      assert.equal((await restarted.get(`${SECRETS}/kept`)).body.data.password, PASSWORD)
      assert.equal((await restarted.post(SECRETS, { metadata: { name: 'after' }, data: { password: PASSWORD } })).status, 201)
    } finally {
      await plugin.start().catch(() => {})
    }
  })

  it('v1 stores a length-prefixed encrypted DEK and AES-GCM data; decrypted DEKs are cached; v1 and v2 are checked one by one', async () => {
    const s = store()
    const client = await s.serve(s.encryption(secretsWith(kms('v1', 'legacy', { cacheSize: 10 }), kms('v2', 'vault'))))
    assert.equal((await client.post(SECRETS, { metadata: { name: 'one' }, data: { password: PASSWORD } })).status, 201)
    const held = s.held('one')
    const prefix = 'k8s:enc:kms:v1:legacy:'
    assert.equal(held.subarray(0, prefix.length).toString(), prefix)
    const { encryptedDek, data } = splitV1(held.subarray(prefix.length))
    const plain = gcmOpen(plugin.unwrap(encryptedDek), data, '/registry/secrets/default/one')
    assert.equal(JSON.parse(plain.toString()).data.password, PASSWORD)
    const decrypts = plugin.calls.decrypt
    assert.equal((await client.get(`${SECRETS}/one`)).body.data.password, PASSWORD)
    assert.equal(plugin.calls.decrypt, decrypts, 'the DEK of a write is cached')
    assert.equal((await client.get('/livez/kms-provider-0')).text, 'ok')
    assert.equal((await client.get('/readyz/kms-provider-1')).text, 'ok')
    assert.equal((await client.get('/healthz/kms-providers')).status, 404)
  })

  it('reads values written in upstream formats: v2 with a seed and with a plain DEK, v1 with AES-GCM and AES-CBC (stale)', async () => {
    const s = store()
    const wrappedSeed = plugin.wrap(Buffer.alloc(32, 7))
    const dek = Buffer.alloc(32, 9)
    const fixtures: Record<string, (plain: Buffer, key: string) => Buffer> = {
      seeded: (plain, key) =>
        Buffer.concat([
          Buffer.from('k8s:enc:kms:v2:vault:'),
          writeV2({ encryptedData: seededSeal(Buffer.alloc(32, 7), plain, key), keyId: 'key-1', encryptedDEKSource: wrappedSeed, annotations: {}, type: 1 }),
        ]),
      plaindek: (plain, key) =>
        Buffer.concat([
          Buffer.from('k8s:enc:kms:v2:vault:'),
          writeV2({ encryptedData: gcmSeal(dek, plain, key), keyId: 'key-0', encryptedDEKSource: plugin.wrap(dek), annotations: {}, type: 0 }),
        ]),
      v1gcm: (plain, key) => v1Value(plain, gcmSeal(dek, plain, key)),
      v1cbc: (plain) => v1Value(plain, cbcSeal(dek, plain)),
    }
    const wrappedDek = plugin.wrap(dek)
    const v1Value = (_plain: Buffer, sealed: Buffer): Buffer => {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(wrappedDek.length)
      return Buffer.concat([Buffer.from('k8s:enc:kms:v1:legacy:'), length, wrappedDek, sealed])
    }
    for (const [name, writer] of Object.entries(fixtures)) {
      const w = await s.serve(writing(writer))
      assert.equal((await w.post(SECRETS, { metadata: { name }, data: { password: PASSWORD } })).status, 201)
    }
    const client = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'), kms('v1', 'legacy'))))
    for (const name of Object.keys(fixtures)) {
      const r = await client.get(`${SECRETS}/${name}`)
      assert.equal(r.status, 200, `${name}: ${r.text}`)
      assert.equal(r.body.data.password, PASSWORD, name)
    }
    const cbc = (await client.get(`${SECRETS}/v1cbc`)).body
    await client.put(`${SECRETS}/v1cbc`, cbc)
    assert.equal(s.held('v1cbc').subarray(0, 21).toString(), 'k8s:enc:kms:v2:vault:', 'rewritten with the first provider')
  })

  it('a plugin that decrypts a DEK to a wrong-sized key: 500 naming the size, nothing kept, and the value reads once the plugin answers right', async () => {
    const s = store()
    const dek = Buffer.alloc(32, 5)
    const wrappedDek = plugin.wrap(dek)
    const fixtures: Record<string, (plain: Buffer, key: string) => Buffer> = {
      v2dek: (plain, key) =>
        Buffer.concat([
          Buffer.from('k8s:enc:kms:v2:vault:'),
          writeV2({ encryptedData: gcmSeal(dek, plain, key), keyId: 'key-0', encryptedDEKSource: wrappedDek, annotations: {}, type: 0 }),
        ]),
      v1dek: (plain, key) => {
        const length = Buffer.alloc(2)
        length.writeUInt16BE(wrappedDek.length)
        return Buffer.concat([Buffer.from('k8s:enc:kms:v1:legacy:'), length, wrappedDek, gcmSeal(dek, plain, key)])
      },
    }
    for (const [name, writer] of Object.entries(fixtures)) {
      const w = await s.serve(writing(writer))
      assert.equal((await w.post(SECRETS, { metadata: { name }, data: { password: PASSWORD } })).status, 201)
    }
    const client = await s.serve(s.encryption(secretsWith(kms('v2', 'vault'), kms('v1', 'legacy'))))
    plugin.misanswer = (opened) => opened.subarray(0, 5)
    try {
      for (const name of Object.keys(fixtures)) {
        const r = await client.get(`${SECRETS}/${name}`)
        assert.equal(r.status, 500, `${name}: ${r.text}`)
        assert.equal(r.body.reason, 'InternalError')
        assert.match(r.body.message, new RegExp(`^Internal error occurred: unable to transform key "/registry/secrets/default/${name}": .*crypto/aes: invalid key size 5`))
        assert.ok(!r.text.includes(PASSWORD))
      }
    } finally {
      plugin.misanswer = undefined
    }
    for (const name of Object.keys(fixtures)) {
      const r = await client.get(`${SECRETS}/${name}`)
      assert.equal(r.status, 200, `${name}: the wrong answer was not kept: ${r.text}`)
      assert.equal(r.body.data.password, PASSWORD)
    }
  })
})
