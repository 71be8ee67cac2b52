/**
 * Watches through the Node listener, which writes a watch's events to the
 * connection as they come (runtimes/node/adapter/direct-body.ts): over HTTP/1.1 and
 * HTTP/2 the client gets each event as one JSON line, the answer ends
 * cleanly when the watch's time is up (an HTTP/1.1 connection is then used
 * again), and a client that goes away ends its watch on the server.
 */
import assert from 'node:assert/strict'
import { Agent, request } from 'node:https'
import { connect, type ClientHttp2Session } from 'node:http2'
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import { type CertificateAuthority, createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

/** Reads a watch body until `count` lines came (0: until it ends); bounded by the watch's own timeoutSeconds. */
function readLines(body: Readable, count: number): Promise<{ lines: string[]; ended: boolean }> {
  return new Promise((resolve, reject) => {
    let text = ''
    // Whole lines only: a large event may arrive in several chunks.
    const lines = (): string[] => text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l !== '')
    body.setEncoding('utf8')
    const onData = (chunk: string) => {
      text += chunk
      if (count > 0 && lines().length >= count) finish(false)
    }
    const finish = (ended: boolean) => {
      body.off('data', onData)
      resolve({ lines: lines(), ended })
    }
    body.on('data', onData)
    body.once('end', () => finish(true))
    body.once('error', reject)
  })
}

describe('watches through the Node listener', () => {
  let ca: CertificateAuthority
  let server: ApiServer
  let api: TestClient
  let listener: TlsListener

  before(async () => {
    ca = await createCertificateAuthority({ commonName: 'test-ca' })
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    server = createTestServer()
    await server.ready
    api = new TestClient(server)
    // Requests run as the embedding administrator: the listener's connection info would make them anonymous.
    listener = await serveTls({ fetch: (req) => server.fetch(req) }, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
  })
  after(async () => {
    await listener?.close()
  })

  async function listRv(): Promise<string> {
    return (await api.get(CM)).body.metadata.resourceVersion as string
  }

  /** Open watches of ConfigMaps, as /metrics tells (a watch is a long-running request until its answer ends). */
  async function openWatches(): Promise<number> {
    const text = (await api.get('/metrics')).text
    const sample = /^apiserver_longrunning_requests\{[^}]*resource="configmaps"[^}]*verb="WATCH"[^}]*\} (\S+)$/m.exec(text)
    return sample ? Number(sample[1]) : 0
  }

  function watch1(agent: Agent, path: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: listener.port, path, ca: ca.certificate, agent }, resolve)
      req.once('error', reject)
      req.end()
    })
  }

  function watch2(session: ClientHttp2Session, path: string): Promise<{ status: number; body: Readable }> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':path': path })
      stream.once('error', reject)
      stream.once('response', (headers) => resolve({ status: Number(headers[':status']), body: stream }))
    })
  }

  it('HTTP/1.1: each event as a line, a clean end when the time is up, and the connection used again', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const rv = await listRv()
      const res = await watch1(agent, `${CM}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-type'], 'application/json')
      assert.equal(res.headers['transfer-encoding'], 'chunked')
      await api.post(CM, { metadata: { name: 'h1-a' } })
      await api.post(CM, { metadata: { name: 'h1-b' } })
      const { lines, ended } = await readLines(res, 0)
      assert.equal(ended, true)
      assert.deepEqual(
        lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } }).map((e) => [e.type, e.object.metadata.name]),
        [
          ['ADDED', 'h1-a'],
          ['ADDED', 'h1-b'],
        ],
      )
      // The answer ended with its last chunk: the same connection carries the next request.
      const next = await watch1(agent, `${CM}?limit=1`)
      const reused = (next as unknown as { req: { reusedSocket: boolean } }).req.reusedSocket
      next.resume()
      assert.equal(next.statusCode, 200)
      assert.equal(reused, true)
    } finally {
      agent.destroy()
    }
  })

  it('HTTP/2: watches as streams of one connection each get every event', async () => {
    const session = connect(`https://127.0.0.1:${listener.port}`, { ca: ca.certificate })
    try {
      const rv = await listRv()
      const path = `${CM}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`
      const watches = await Promise.all([watch2(session, path), watch2(session, path)])
      for (const w of watches) assert.equal(w.status, 200)
      await api.post(CM, { metadata: { name: 'h2-a' } })
      const got = await Promise.all(watches.map((w) => readLines(w.body, 0)))
      for (const { lines, ended } of got) {
        assert.equal(ended, true)
        assert.deepEqual(
          lines.map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name),
          ['h2-a'],
        )
      }
    } finally {
      session.destroy()
    }
  })

  // Without a resourceVersion the watch first waits for the cache to be fresh; from one it is the cache's own at once.
  for (const from of ['the current state', 'a resourceVersion']) {
    it(`a client that goes away ends its watch on the server (a watch from ${from})`, async () => {
      const agent = new Agent({ keepAlive: false })
      try {
        const before = await openWatches()
        const res = await watch1(agent, from === 'a resourceVersion' ? `${CM}?watch=1&resourceVersion=${await listRv()}` : `${CM}?watch=1`)
        assert.equal(res.statusCode, 200)
        assert.equal(await openWatches(), before + 1)
        res.destroy()
        await eventually('the watch is ended', async () => (await openWatches()) === before)
      } finally {
        agent.destroy()
      }
    })
  }

  it('a client that reads slowly gets every event, in order, once it reads', async () => {
    const agent = new Agent({ keepAlive: false })
    try {
      const res = await watch1(agent, `${CM}?watch=1&resourceVersion=${await listRv()}&timeoutSeconds=5`)
      assert.equal(res.statusCode, 200)
      res.pause()
      // Some 3 MB of events: more than the sockets' buffers hold, so the server waits for the client to read.
      const value = 'x'.repeat(100_000)
      const names = Array.from({ length: 30 }, (_, i) => `slow-${String(i).padStart(2, '0')}`)
      for (const name of names) await api.post(CM, { metadata: { name }, data: { value } })
      res.resume()
      const { lines } = await readLines(res, names.length)
      assert.deepEqual(
        lines.map((l) => (JSON.parse(l) as { object: { metadata: { name: string }; data: { value: string } } }).object).map((o) => [o.metadata.name, o.data.value.length]),
        names.map((name) => [name, value.length]),
      )
    } finally {
      agent.destroy()
    }
  })
})
