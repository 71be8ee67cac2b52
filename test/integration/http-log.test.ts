/**
 * The HTTP log through fetch: at V(3) of `httplog` (by -v or --vmodule) each
 * request writes one "HTTP" line with upstream's keys; below it, none.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiServer } from '../../core/index.js'
import { type Verbosity, verbosityEnabled } from '../../core/logging/verbosity.js'
import type { Logger } from '../../core/logging/logger.js'
import { TestClient } from './harness.js'

interface Line {
  fields: Record<string, unknown>
  message: string
}

/** A logger that keeps what it is given, with klog's verbosity. */
function capturingLogger(verbosity: Verbosity): { logger: Logger; lines: Line[] } {
  const lines: Line[] = []
  const keep = (fields: Record<string, unknown>, message: string): void => void lines.push({ fields, message })
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep, enabled: (level, module) => verbosityEnabled(verbosity, level, module) } }
}

const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
]
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}`, 'user-agent': 'kubectl/v1.32.0 (test)', 'audit-id': `id-${token}` }, connection: { remoteAddress: '192.0.2.7' } })

async function withServer(verbosity: Verbosity, run: (api: TestClient, lines: Line[]) => Promise<void>): Promise<void> {
  const { logger, lines } = capturingLogger(verbosity)
  const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { logger })
  try {
    await server.ready
    await run(new TestClient(server), lines)
  } finally {
    await server.shutdown()
  }
}

/** The lines of the test's own requests: the server's controllers make requests of their own, logged alike. */
const httpLines = (lines: Line[]) => lines.filter((l) => l.message === 'HTTP' && l.fields['userAgent'] === 'kubectl/v1.32.0 (test)').map((l) => l.fields)

describe('HTTP request log', () => {
  it('writes one line per request at -v=3 with verb, URI, latency, user agent, audit ID, source and status', async () => {
    await withServer({ v: 3, vmodule: [] }, async (api, lines) => {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' } }
      assert.equal((await api.post('/api/v1/namespaces/default/configmaps', cm, as('admin-token'))).status, 201)
      assert.equal((await api.get('/api/v1/namespaces/default/configmaps?limit=5', as('admin-token'))).status, 200)
      assert.equal((await api.get('/api/v1/secrets', as('user-token'))).status, 403)
      const logged = httpLines(lines)
      assert.equal(logged.length, 3)
      const [create, list, refused] = logged
      assert.deepEqual({ ...create, latency: undefined }, {
        verb: 'POST',
        URI: '/api/v1/namespaces/default/configmaps',
        latency: undefined,
        userAgent: 'kubectl/v1.32.0 (test)',
        'audit-ID': 'id-admin-token',
        srcIP: '192.0.2.7',
        resp: 201,
        v: 3,
        module: 'httplog',
      })
      assert.match(String(create?.latency), /^\d+(\.\d+)?(ns|µs|ms|s)$/)
      assert.equal(list?.verb, 'LIST')
      assert.equal(list?.URI, '/api/v1/namespaces/default/configmaps?limit=5')
      assert.equal(refused?.resp, 403)
    })
  })

  it('writes the first 64 characters of a long Audit-ID the client chose, as upstream', async () => {
    await withServer({ v: 3, vmodule: [] }, async (api, lines) => {
      const long = `${'a'.repeat(64)}${'b'.repeat(8000)}`
      const r = await api.get('/version', { ...as('admin-token'), headers: { ...as('admin-token').headers, 'audit-id': long } })
      assert.equal(r.status, 200)
      assert.equal(r.headers.get('audit-id'), long)
      const [line] = httpLines(lines)
      assert.equal(line?.['audit-ID'], 'a'.repeat(64))
    })
  })

  it('writes it for the modules --vmodule raises to 3, and not at all below', async () => {
    await withServer({ v: 0, vmodule: [{ pattern: 'http*', verbosity: 3 }] }, async (api, lines) => {
      await api.get('/version', as('admin-token'))
      assert.equal(httpLines(lines).length, 1)
    })
    await withServer({ v: 2, vmodule: [{ pattern: 'authentication', verbosity: 9 }] }, async (api, lines) => {
      await api.get('/version', as('admin-token'))
      assert.equal(httpLines(lines).length, 0)
    })
  })
})
