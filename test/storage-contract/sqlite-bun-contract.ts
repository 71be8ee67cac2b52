/**
 * The storage contract against the Bun driver (bun:sqlite), run under
 * `bun test` by sqlite-bun.test.ts (it cannot load under Node).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { openEmbeddedStore } from '../../runtimes/bun/sqlite.js'
import { runStorageContract } from './contract.js'

const root = mkdtempSync(join(tmpdir(), 'embedded-store-bun-contract-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0

runStorageContract('embedded sqlite under Bun', () => openEmbeddedStore({ dataDir: join(root, `store-${++dirs}`) }), {
  compact: async (s) => s.compact(await s.currentRevision()),
})
