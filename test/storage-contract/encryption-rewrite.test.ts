/**
 * The rewrite after a rotation on every backend (memory, the embedded store,
 * a real etcd): values written under the old key are written again under
 * the new one, a value of a removed key is reported and left while the
 * objects after it are rewritten, a write landing between the rewrite's
 * read and its write (each backend's own compare-and-swap) is kept, and a
 * rerun writes nothing.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { EncryptionConfiguration, EncryptionProvider } from '../../core/config/encryption.js'
import { EncryptionTransformers } from '../../core/encryption/resource-transformers.js'
import { rewriteStaleValues, type RewriteCounts } from '../../core/encryption/rewrite.js'
import { jsonCodec } from '../../core/storage/codec.js'
import type { Storage } from '../../core/storage/interface.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import type { ValueTransformer } from '../../core/storage/value/transformer.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { EtcdServer } from './etcd-server.js'

const PREFIX = '/registry/secrets/'
const aesgcm = (name: string, fill: number): EncryptionProvider => ({ type: 'aesgcm', keys: [{ name, secret: new Uint8Array(32).fill(fill) }] })
const everything = (...providers: EncryptionProvider[]): EncryptionConfiguration => ({ resources: [{ resources: [{ group: '*', resource: '*' }], providers }] })
const dataOf = (obj: unknown): unknown => (obj as { data?: { x?: string } } | undefined)?.data?.x
const secret = (name: string, value = 'eQ==') => ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name }, data: { x: value } })

/** The transformer every key goes through, replaced as a server's configuration would be; with a hook on one key's writes. */
class Keys {
  private current: ValueTransformer = new EncryptionTransformers(everything(aesgcm('old', 1))).forResource({ group: '', resource: 'secrets' })
  hook: { key: string; run: () => Promise<void> } | undefined

  use(config: EncryptionConfiguration): void {
    this.current = new EncryptionTransformers(config).forResource({ group: '', resource: 'secrets' })
  }

  readonly transformerFor = (key: string): ValueTransformer => ({
    fromStorage: (bytes, context) => this.current.fromStorage(bytes, context),
    toStorage: async (bytes, context) => {
      const hook = this.hook?.key === key ? this.hook : undefined
      if (hook) {
        this.hook = undefined
        await hook.run()
      }
      return this.current.toStorage(bytes, context)
    },
  })
}

async function drain(lines: AsyncGenerator<string, RewriteCounts>): Promise<{ lines: string[]; counts: RewriteCounts }> {
  const out: string[] = []
  for (;;) {
    const next = await lines.next()
    if (next.done) return { lines: out, counts: next.value }
    out.push(next.value)
  }
}

async function scenario(open: (transformerFor: Keys['transformerFor']) => Promise<Storage>): Promise<void> {
  const keys = new Keys()
  const storage = await open(keys.transformerFor)
  try {
    for (const name of ['a1', 'a2', 'a3']) await storage.create(`${PREFIX}ns/${name}`, secret(name))
    keys.use(everything(aesgcm('removed', 3)))
    await storage.create(`${PREFIX}ns/b-lost`, secret('b-lost'))
    keys.use(everything(aesgcm('old', 1)))
    for (const name of ['c1', 'c2']) await storage.create(`${PREFIX}ns/${name}`, secret(name))

    keys.use(everything(aesgcm('new', 2), aesgcm('old', 1)))
    // A client's update of a2 lands after the rewrite read a2 and before it writes it.
    keys.hook = { key: `${PREFIX}ns/a2`, run: async () => void (await storage.guaranteedUpdate(`${PREFIX}ns/a2`, () => secret('a2', 'Y2xpZW50'))) }
    const targets = [{ group: '', resource: 'secrets', prefix: PREFIX, storage }]
    const first = await drain(rewriteStaleValues(targets, { pageSize: 2 }))
    assert.match(first.lines.join('\n'), /secrets: failed \/registry\/secrets\/ns\/b-lost: /)
    assert.equal(first.lines.at(-2), 'secrets: 6 checked, 4 rewritten, 1 already current, 1 failed', first.lines.join('\n'))
    assert.equal(keys.hook, undefined, 'the concurrent update ran')

    // Only the new key now: everything but the lost value reads, the client's update in place.
    keys.use(everything(aesgcm('new', 2)))
    for (const name of ['a1', 'a3', 'c1', 'c2']) assert.equal(dataOf(await storage.get(`${PREFIX}ns/${name}`)), 'eQ==', name)
    assert.equal(dataOf(await storage.get(`${PREFIX}ns/a2`)), 'Y2xpZW50', 'the concurrent update is kept')
    await assert.rejects(storage.get(`${PREFIX}ns/b-lost`), /unable to transform key/)

    keys.use(everything(aesgcm('new', 2), aesgcm('old', 1)))
    const rerun = await drain(rewriteStaleValues(targets, { pageSize: 2 }))
    assert.deepEqual(rerun.counts, { checked: 6, rewritten: 0, current: 5, failed: 1 })
  } finally {
    await storage.close()
  }
}

describe('rewrite after a rotation, on every backend', () => {
  let etcd: EtcdServer
  const root = mkdtempSync(join(tmpdir(), 'rewrite-store-'))
  before(async () => {
    etcd = await EtcdServer.start()
  })
  after(async () => {
    await etcd?.destroy()
    rmSync(root, { recursive: true, force: true })
  })

  it('memory', () => scenario(async (transformerFor) => new MemoryStorage({ transformerFor })))
  it('the embedded store', () => scenario(async (transformerFor) => openEmbeddedStore({ dataDir: join(root, 'embedded'), transformerFor })))
  it('etcd', () => scenario(async (transformerFor) => new EtcdStorage({ endpoints: [etcd.clientUrl], codec: jsonCodec, transformerFor })))
})
