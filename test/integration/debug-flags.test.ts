/**
 * `/debug/flags/v` through fetch, over the daemon's own logger: an
 * administrator's PUT changes the log verbosity from then on (the request
 * log, klog's V(3), starts and stops), a body that is no level is refused
 * with strconv's words, another method with 406, a user without `put` on
 * the path with 403, and `--profiling=false` removes the paths.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer } from '../../core/index.js'
import { serveDebugSocket } from '../../runtimes/node/daemon/debug-socket.js'
import { daemonLogger } from '../../runtimes/node/daemon/logging.js'
import { nodeProfiler } from '../../runtimes/node/daemon/profiler.js'

const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
]
const call = (server: ApiServer, method: string, path: string, body?: string, token = 'admin-token') =>
  server.fetch(new Request(`http://in-process${path}`, { method, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body }) }), {})

describe('/debug/flags/v', () => {
  const lines: string[] = []
  let server: ApiServer
  let disabled: ApiServer
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
        done()
      },
    })
    const { logger } = daemonLogger({ format: 'json', verbosity: { v: 0, vmodule: [] }, flushFrequencyMs: 5000, splitStream: false, infoBufferSize: 0 }, sink)
    server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { logger })
    disabled = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'], serving: { profiling: false } }, { logger })
    await Promise.all([server.ready, disabled.ready])
  })
  after(async () => {
    await Promise.all([server?.shutdown(), disabled?.shutdown()])
  })

  /** Whether the request log (V(3)) recorded a request for `path`. */
  const logged = (path: string) => lines.some((l) => l.includes('"module":"httplog"') && l.includes(JSON.stringify(path)))

  it('sets the log verbosity from an administrator\'s PUT, as upstream answers it', async () => {
    assert.equal((await call(server, 'GET', '/api/v1/namespaces/default')).status, 200)
    assert.equal(logged('/api/v1/namespaces/default'), false, 'V(3) shows at -v=0')

    const set = await call(server, 'PUT', '/debug/flags/v', '3')
    assert.equal(set.status, 200)
    assert.equal(set.headers.get('content-type'), 'text/plain')
    assert.equal(set.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(await set.text(), 'successfully set klog.logging.verbosity to 3\n')
    assert.equal((await call(server, 'GET', '/api/v1/namespaces/kube-system')).status, 200)
    assert.ok(logged('/api/v1/namespaces/kube-system'), 'the request log shows at -v=3')

    const back = await call(server, 'PUT', '/debug/flags/v', '0')
    assert.equal(await back.text(), 'successfully set klog.logging.verbosity to 0\n')
    assert.equal((await call(server, 'GET', '/api/v1/namespaces/kube-public')).status, 200)
    assert.equal(logged('/api/v1/namespaces/kube-public'), false, 'V(3) still shows at -v=0')
  })

  it('refuses a body that is no level with 400 in strconv\'s words, and leaves the verbosity as it was', async () => {
    const cases: [string, string][] = [
      ['3\n', 'failed set klog.logging.verbosity 3\n: strconv.ParseInt: parsing "3\\n": invalid syntax\n'],
      ['', 'failed set klog.logging.verbosity : strconv.ParseInt: parsing "": invalid syntax\n'],
      ['0x3', 'failed set klog.logging.verbosity 0x3: strconv.ParseInt: parsing "0x3": invalid syntax\n'],
      ['99999999999', 'failed set klog.logging.verbosity 99999999999: strconv.ParseInt: parsing "99999999999": value out of range\n'],
      ['2147483648', 'failed set klog.logging.verbosity 2147483648: strconv.ParseInt: parsing "2147483648": value out of range\n'],
    ]
    for (const [body, text] of cases) {
      const r = await call(server, 'PUT', '/debug/flags/v', body)
      assert.equal(r.status, 400, JSON.stringify(body))
      assert.equal(r.headers.get('content-type'), 'text/plain')
      assert.equal(await r.text(), text)
    }
    assert.equal((await call(server, 'GET', '/api/v1/namespaces/kube-node-lease')).status, 200)
    assert.equal(logged('/api/v1/namespaces/kube-node-lease'), false)
  })

  it('answers another method with 406, and every other path under /debug/flags with the index', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const r = await call(server, method, '/debug/flags/v', method === 'POST' ? '3' : undefined)
      assert.equal(r.status, 406, method)
      assert.equal(await r.text(), 'unsupported http method\n')
    }
    for (const path of ['/debug/flags', '/debug/flags/', '/debug/flags/vmodule']) {
      const r = await call(server, 'GET', path)
      assert.equal(r.status, 200, path)
      assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8')
      const page = await r.text()
      assert.match(page, /<title>\/debug\/flags\/<\/title>/)
      assert.match(page, /<tr>v<br>/)
    }
  })

  it('refuses a user without put on the path with 403, and serves nothing with profiling off', async () => {
    const r = await call(server, 'PUT', '/debug/flags/v', '9', 'user-token')
    assert.equal(r.status, 403)
    assert.equal(((await r.json()) as { message: string }).message, 'forbidden: User "jane" cannot put path "/debug/flags/v"')
    assert.equal((await call(disabled, 'PUT', '/debug/flags/v', '3')).status, 404)
    assert.equal((await call(disabled, 'GET', '/debug/flags/')).status, 404)
  })

  it('is served on the debug socket too, without credentials, as upstream\'s socket serves it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-debug-flags-'))
    const socketPath = join(dir, 'debug.sock')
    const levels: number[] = []
    const socket = await serveDebugSocket(socketPath, await nodeProfiler({ sampleHeap: false }), (level) => levels.push(level))
    const put = (body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request({ socketPath, path: '/debug/flags/v', method: 'PUT' }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        })
        req.once('error', reject)
        req.end(body)
      })
    try {
      assert.deepEqual(await put('5'), { status: 200, text: 'successfully set klog.logging.verbosity to 5\n' })
      assert.deepEqual(await put('five'), { status: 400, text: 'failed set klog.logging.verbosity five: strconv.ParseInt: parsing "five": invalid syntax\n' })
      assert.deepEqual(levels, [5])
    } finally {
      await socket.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
