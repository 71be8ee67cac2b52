/**
 * The storage contract against the Deno driver (node:sqlite), run under
 * `deno test` by sqlite-deno.test.ts (node:sqlite is not in Node 20).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { openDenoSqlite } from '../../runtimes/deno/sqlite.js'
import { openEmbeddedStoreWith } from '../../runtimes/node/storage/embedded.js'
import { runStorageContract } from './contract.js'

const root = mkdtempSync(join(tmpdir(), 'embedded-store-deno-contract-'))
after(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0

runStorageContract('embedded sqlite under Deno', () => openEmbeddedStoreWith({ dataDir: join(root, `store-${++dirs}`) }, openDenoSqlite), {
  compact: async (s) => s.compact(await s.currentRevision()),
})
