/**
 * Run under Deno by sqlite-deno.test.ts: opens the embedded store in the
 * given data directory through node:sqlite and prints one JSON line: the
 * revision and the object at the given key, or why opening failed.
 *
 *   deno run ... sqlite-deno-child.ts <data-dir> <key>
 */
import { openDenoSqlite } from '../../runtimes/deno/sqlite.js'
import { openEmbeddedStoreWith } from '../../runtimes/node/storage/embedded.js'

const [dataDir, key] = process.argv.slice(2)
if (!dataDir || !key) throw new Error('usage: sqlite-deno-child.ts <data-dir> <key>')

const report = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`)

try {
  const store = await openEmbeddedStoreWith({ dataDir }, openDenoSqlite)
  report({ opened: true, revision: await store.currentRevision(), object: await store.get(key) })
  await store.close()
} catch (err) {
  report({ opened: false, error: (err as Error).message })
}
