/**
 * Run by sqlite-crash.test.ts in its own process: opens the embedded store in
 * the data directory given as the first argument and creates ConfigMaps in a
 * loop until it is killed, printing `<name> <resourceVersion>` for each one
 * only after the store acknowledged it. With `shared` as the second argument
 * (sqlite-shared.test.ts) it shares the file with other stores, as a worker of
 * `--workers` does; with `concurrent`, eight such loops write at once, as a
 * server's clients do (the store then commits them in batches).
 */
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'

const dataDir = process.argv[2]
if (!dataDir) throw new Error('usage: sqlite-crash-child.ts <data-dir> [shared|concurrent]')
const shared = process.argv[3] === 'shared'
const writers = process.argv[3] === 'concurrent' ? 8 : 1
const store = await openEmbeddedStore({ dataDir, ...(shared ? { shared: {} } : {}) })

async function writeForever(writer: number): Promise<never> {
  for (let i = 0; ; i++) {
    const name = writers > 1 ? `cm-${writer}-${i}` : `cm-${i}`
    const created = await store.create(`/registry/configmaps/default/${name}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default' },
      data: { index: String(i) },
    })
    process.stdout.write(`${name} ${created.metadata.resourceVersion}\n`)
  }
}

await Promise.all(Array.from({ length: writers }, (_, writer) => writeForever(writer)))
