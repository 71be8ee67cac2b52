/**
 * The storage contract again with values encrypted at rest (aesgcm, whose
 * nonce makes the stored bytes differ on every write): memory, which then
 * holds only the transformed bytes, and the embedded store. What the
 * contract promises does not change when values go through a transformer.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { EncryptionTransformers } from '../../core/encryption/resource-transformers.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { runStorageContract } from './contract.js'

const encryption = new EncryptionTransformers({
  resources: [{ resources: [{ group: '*', resource: '*' }], providers: [{ type: 'aesgcm', keys: [{ name: 'k1', secret: new Uint8Array(32).fill(9) }] }] }],
})
const transformerFor = () => encryption.forResource({ group: '', resource: 'pods' })

runStorageContract('memory, encrypted', async () => new MemoryStorage({ transformerFor }), {
  compact: async (s) => s.compact(await s.currentRevision()),
})

const root = mkdtempSync(join(tmpdir(), 'encrypted-store-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
runStorageContract('embedded sqlite, encrypted', () => openEmbeddedStore({ dataDir: join(root, `store-${++dirs}`), transformerFor }), {
  compact: async (s) => s.compact(await s.currentRevision()),
})
