/**
 * Every route table a server builds is one hono compiles (one regular
 * expression per method). A table it cannot compile is matched by its trie
 * instead, on every request of that server: the daemon's table, with
 * `/debug/pprof/`'s fixed names beside a parameter, was, and its GETs spent
 * some 7% of their CPU walking the trie (docs/benchmarks.md, "The read
 * path"). The servers here carry every optional route the chain can hold:
 * profiling, the log files, the encryption rewrite, issuer discovery and
 * API aggregation.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Hono } from 'hono'
import { type ApiServer, createApiServer } from '../../core/index.js'
import { routeTableMatchers, SharedRouter } from '../../core/http/shared-router.js'
import { nodeLogFiles } from '../../runtimes/node/daemon/log-files.js'
import { nodeProfiler } from '../../runtimes/node/daemon/profiler.js'

const tokens = [{ token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } }]
const get = async (server: ApiServer, path: string): Promise<number> => {
  const res = await server.fetch(new Request(`http://in-process${path}`, { headers: { authorization: 'Bearer admin-token' } }), {})
  await res.arrayBuffer()
  return res.status
}

describe('route tables', () => {
  const logs = mkdtempSync(join(tmpdir(), 'apiserver-route-tables-'))
  const servers: ApiServer[] = []
  after(async () => {
    await Promise.all(servers.map((server) => server.shutdown()))
    rmSync(logs, { recursive: true, force: true })
  })

  it('are compiled for servers with every optional route', async () => {
    const profiler = await nodeProfiler({ sampleHeap: false })
    after(() => profiler.close())
    const encryption = { resources: [{ resources: [{ group: '', resource: 'secrets' }], providers: [{ type: 'identity' as const }] }] }
    servers.push(
      createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { profiler, logFiles: nodeLogFiles(logs) }),
      createApiServer({ authentication: { tokens, serviceAccounts: { issuers: ['https://127.0.0.1'] } }, encryption, aggregation: {} }, { profiler }),
    )
    for (const server of servers) {
      await server.ready
      // Each path below is one the optional routes answer, so the table is the one that holds them.
      assert.equal(await get(server, '/debug/pprof/unknown'), 404)
      assert.equal(await get(server, '/api/v1/namespaces/default/configmaps'), 200)
    }
    assert.equal(await get(servers[0]!, '/logs/'), 200)
    const matchers = routeTableMatchers()
    assert.ok(matchers.length >= 2, `route tables seen: ${matchers.join(', ')}`)
    assert.deepEqual(
      matchers.filter((name) => name !== 'RegExpRouter'),
      [],
      'every route table is matched by the compiled router',
    )
  })

  it('reports a table hono cannot compile (a parameter beside fixed names)', async () => {
    const app = new Hono({ router: new SharedRouter() })
    app.get('/checks/fixed-name', (c) => c.text('fixed'))
    app.get('/checks/:name', (c) => c.text(c.req.param('name')))
    assert.equal(await (await app.request('/checks/other')).text(), 'other')
    assert.ok(routeTableMatchers().includes('TrieRouter'))
  })
})
