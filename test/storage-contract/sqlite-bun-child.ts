/**
 * Run under Bun by sqlite-bun.test.ts: opens the embedded store in the given
 * data directory through bun:sqlite and prints one JSON line with what it
 * found and did.
 *
 *   bun sqlite-bun-child.ts <data-dir> write   reads a ConfigMap the Node side wrote, its history, creates another
 *   bun sqlite-bun-child.ts <data-dir> open    only opens, reporting the error when opening fails
 */
import { openEmbeddedStore } from '../../runtimes/bun/sqlite.js'

const [dataDir, action] = process.argv.slice(2)
if (!dataDir || (action !== 'write' && action !== 'open')) throw new Error('usage: sqlite-bun-child.ts <data-dir> write|open')

const report = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`)

if (action === 'open') {
  try {
    const store = await openEmbeddedStore({ dataDir })
    report({ opened: true, revision: await store.currentRevision() })
    await store.close()
  } catch (err) {
    report({ opened: false, error: (err as Error).message })
  }
} else {
  const store = await openEmbeddedStore({ dataDir })
  const prefix = '/registry/configmaps/'
  const listed = await store.list(prefix)
  const history = await Promise.all(
    [2, 3].map((rv) => store.get(`${prefix}default/a`, { resourceVersion: String(rv), resourceVersionMatch: 'Exact' })),
  )
  const created = await store.create(`${prefix}default/from-bun`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'from-bun', namespace: 'default' },
    data: { runtime: 'bun' },
  })
  report({ listed: listed.items, history, created, revision: await store.currentRevision() })
  await store.close()
}
