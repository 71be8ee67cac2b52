/**
 * `--kvstore-db-metric-poll-interval` (`--etcd-db-metric-poll-interval`):
 * the daemon's storage, opened as the flags say, reports its database size,
 * and `/metrics` carries it as upstream's
 * `apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}`: the embedded
 * store's SQLite file (page count times page size)
 * and a real etcd's Maintenance status dbSize. An interval of 0 publishes
 * nothing.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parseCommandLine } from '../../core/options/flags/parse.js'
import { silentLogger } from '../../core/logging/logger.js'
import { EMBEDDED_STORE_FILE } from '../../core/storage/sql/open.js'
import { openDaemonStorage, type DaemonStorage } from '../../runtimes/node/storage/open.js'
import { openLibsql } from '../../runtimes/node/storage/sqlite.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'
import { createTestServer, TestClient } from './harness.js'

const METRIC = 'apiserver_storage_size_bytes'

/** The flag values of `argv`, as the daemon reads them. */
function flagValues(argv: string[]) {
  const line = parseCommandLine(argv)
  if (line.action !== 'run') throw new Error(`unexpected ${line.action}`)
  return line.flags.values
}

async function open(argv: string[]): Promise<DaemonStorage> {
  return openDaemonStorage(flagValues(argv), silentLogger, undefined, openLibsql)
}

/** Scrapes `/metrics` until the size shows (the first poll runs as the server starts); undefined if it never does. */
async function scrapedSize(client: TestClient, tries = 50): Promise<number | undefined> {
  for (let i = 0; i < tries; i++) {
    const families = parsePrometheusText((await client.get('/metrics')).text)
    const value = sampleValue(families, METRIC, { storage_cluster_id: 'etcd-0' })
    if (value !== undefined) {
      assert.equal(families.get(METRIC)?.type, 'gauge')
      return value
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return undefined
}

describe('apiserver_storage_size_bytes', () => {
  const dirs: string[] = []
  const tempDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'storage-size-'))
    dirs.push(dir)
    return dir
  }
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it('reports the embedded store\'s file size, which grows as objects are written', async () => {
    const dir = await tempDir()
    const storage = await open(['--data-dir', dir])
    const server = createTestServer({ storageSizePollMs: 50 }, { storage: storage.storage, storageFactory: storage.factory, storageSizes: storage.sizes })
    try {
      await server.ready
      const client = new TestClient(server)
      const [direct] = await storage.sizes()
      assert.ok(direct !== undefined && direct > 0)
      // Pages not yet checkpointed from the write-ahead log count already, as SQLite's page_count says.
      const onDisk = (await stat(join(dir, EMBEDDED_STORE_FILE))).size + (await stat(join(dir, `${EMBEDDED_STORE_FILE}-wal`)).catch(() => ({ size: 0 }))).size
      assert.ok(direct <= onDisk, `${direct} bytes, no more than the ${onDisk} of the file and its log`)
      const first = await scrapedSize(client)
      assert.ok(first !== undefined && first > 0, `${METRIC} is published`)
      for (let i = 0; i < 40; i++) {
        const reply = await client.post('/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `big-${i}` },
          data: { blob: 'x'.repeat(20_000) },
        })
        assert.equal(reply.status, 201, reply.text)
      }
      const [grown] = await storage.sizes()
      assert.ok(grown !== undefined && grown > first, `the file grew from ${first} to ${grown}`)
    } finally {
      await server.shutdown()
      await storage.close()
    }
  })

  it('publishes nothing with an interval of 0', async () => {
    const dir = await tempDir()
    const storage = await open(['--data-dir', dir, '--etcd-db-metric-poll-interval=0'])
    const server = createTestServer(
      { storageSizePollMs: flagValues(['--etcd-db-metric-poll-interval=0'])['kvstore-db-metric-poll-interval'] },
      { storage: storage.storage, storageFactory: storage.factory, storageSizes: storage.sizes },
    )
    try {
      await server.ready
      const families = parsePrometheusText((await new TestClient(server).get('/metrics')).text)
      assert.equal(families.get(METRIC), undefined)
    } finally {
      await server.shutdown()
      await storage.close()
    }
  })

  describe('on etcd', () => {
    let etcd: EtcdServer
    before(async () => {
      etcd = await EtcdServer.start()
    })
    after(async () => {
      await etcd?.destroy()
    })

    it('reports the member\'s dbSize', async () => {
      const storage = await open([`--etcd-servers=${etcd.clientUrl}`])
      const server = createTestServer({ storageSizePollMs: 50 }, { storage: storage.storage, storageFactory: storage.factory, storageSizes: storage.sizes })
      try {
        await server.ready
        const size = await scrapedSize(new TestClient(server))
        assert.ok(size !== undefined && size > 0, `${METRIC} is published`)
      } finally {
        await server.shutdown()
        await storage.close()
      }
    })
  })
})
