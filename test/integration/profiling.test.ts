/**
 * `/debug/pprof/` through fetch, over the Node runtime's profiler port: the
 * chain lets only users allowed to get the paths profile, a heap profile
 * is pprof with this process's own stacks, a runtime without a heap
 * profiler answers 501 with its reason, and `--profiling=false` removes
 * the paths.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ApiServer, createApiServer } from '../../core/index.js'
import type { Profiler } from '../../core/ports.js'
import { type NodeProfiler, nodeProfiler } from '../../runtimes/node/daemon/profiler.js'
import { decodePprof } from '../helpers/pprof.js'

const tokens = [
  { token: 'admin-token', user: { username: 'root', groups: ['system:masters'] } },
  { token: 'user-token', user: { username: 'jane', groups: ['dev'] } },
]
const get = (server: ApiServer, path: string, token = 'admin-token') =>
  server.fetch(new Request(`http://in-process${path}`, { headers: { authorization: `Bearer ${token}` } }), {})

describe('/debug/pprof/ in process', () => {
  let sampling: NodeProfiler
  let withHeap: ApiServer
  let withoutHeap: ApiServer
  let disabled: ApiServer
  before(async () => {
    sampling = await nodeProfiler({ sampleHeap: true })
    withHeap = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { profiler: sampling })
    withoutHeap = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { profiler: await nodeProfiler({ sampleHeap: false }) })
    disabled = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'], serving: { profiling: false } }, { profiler: sampling })
    await Promise.all([withHeap.ready, withoutHeap.ready, disabled.ready])
  })
  after(async () => {
    sampling?.close()
    await Promise.all([withHeap?.shutdown(), withoutHeap?.shutdown(), disabled?.shutdown()])
  })

  it('serves an administrator a gzip-compressed pprof heap profile with stacks of this process', async () => {
    const res = await get(withHeap, '/debug/pprof/heap?gc=1')
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/octet-stream')
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="heap"')
    const profile = decodePprof(new Uint8Array(await res.arrayBuffer()))
    assert.deepEqual(profile.sampleTypes, [{ type: 'inuse_space', unit: 'bytes' }])
    assert.ok(profile.samples.some((s) => s.stack.some((f) => f.fileName.endsWith('.ts') || f.fileName.endsWith('.js'))), 'stacks name script files')
  })

  it('refuses a user without get on the path with 403', async () => {
    const res = await get(withHeap, '/debug/pprof/allocs', 'user-token')
    assert.equal(res.status, 403)
    assert.match(((await res.json()) as { message: string }).message, /cannot get path "\/debug\/pprof\/allocs"/)
  })

  it('answers 501 with the reason where the runtime has no heap profiler, and still profiles the CPU', async () => {
    for (const name of ['heap', 'allocs']) {
      const res = await get(withoutHeap, `/debug/pprof/${name}`)
      assert.equal(res.status, 501)
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
      assert.equal(await res.text(), 'Heap profiles are not available: neither --profiling nor --debug-socket-path is set\n')
    }
    const cpu = await get(withoutHeap, '/debug/pprof/profile?seconds=1')
    assert.equal(cpu.status, 200)
    assert.deepEqual(decodePprof(new Uint8Array(await cpu.arrayBuffer())).sampleTypes.map((t) => t.type), ['samples', 'cpu'])
  })

  it("refuses a second CPU profile while one runs with Go's 500, and stops profiling when the request ends", { timeout: 120_000 }, async () => {
    // The real profiler, watched only to know when the first request has reached it.
    const real = await nodeProfiler({ sampleHeap: false })
    let reached!: () => void
    const firstReached = new Promise<void>((resolve) => (reached = resolve))
    const watched: Profiler = {
      ...real,
      cpuProfile(seconds, stop) {
        const profile = real.cpuProfile(seconds, stop)
        reached()
        return profile
      },
    }
    const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'] }, { profiler: watched })
    await server.ready
    try {
      const leaving = new AbortController()
      const first = server.fetch(
        new Request('http://in-process/debug/pprof/profile?seconds=300', { headers: { authorization: 'Bearer admin-token' }, signal: leaving.signal }),
        {},
      )
      await firstReached

      const second = await get(server, '/debug/pprof/profile?seconds=1')
      assert.equal(second.status, 500)
      assert.equal(second.headers.get('content-type'), 'text/plain; charset=utf-8')
      assert.equal(second.headers.get('x-go-pprof'), '1')
      assert.equal(second.headers.get('content-disposition'), null)
      assert.equal(await second.text(), 'Could not enable CPU profiling: cpu profiling already in use\n')

      // The client leaves: the profile stops there, not 300 s later (the test's time-out only guards against a hang).
      leaving.abort()
      const ended = await first
      assert.equal(ended.status, 200)
      assert.equal(ended.headers.get('content-disposition'), 'attachment; filename="profile"')
      await ended.arrayBuffer()

      const next = await get(server, '/debug/pprof/profile?seconds=1')
      assert.equal(next.status, 200, await next.clone().text())
      assert.deepEqual(decodePprof(new Uint8Array(await next.arrayBuffer())).sampleTypes.map((t) => t.type), ['samples', 'cpu'])
    } finally {
      await server.shutdown()
    }
  })

  it('lets a CPU profile run past --request-timeout, a long-running request as upstream counts it', async () => {
    const server = createApiServer({ authentication: { tokens }, authorizationModes: ['RBAC'], requestTimeoutMs: 500 }, { profiler: sampling })
    await server.ready
    try {
      const cpu = await get(server, '/debug/pprof/profile?seconds=1')
      assert.equal(cpu.status, 200, await cpu.clone().text())
      assert.deepEqual(decodePprof(new Uint8Array(await cpu.arrayBuffer())).sampleTypes.map((t) => t.type), ['samples', 'cpu'])
    } finally {
      await server.shutdown()
    }
  })

  it('serves no profile with profiling off', async () => {
    for (const path of ['/debug/pprof/', '/debug/pprof/heap', '/debug/pprof/profile?seconds=1']) assert.equal((await get(disabled, path)).status, 404, path)
  })
})
