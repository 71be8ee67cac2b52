/**
 * HTTP/1.1 requests that ask for an upgrade on the Node listener. Those core
 * does not hand to a backend (anything but exec, attach and port-forward):
 * the answer streams to the client as it comes, a client that goes cancels
 * it (a watch ends instead of gathering events for an hour), and the URL is
 * the request line's, never one a Host header rewrites. Those it hands over:
 * a backend's 101 or error passes to the client, any other answer is
 * upstream's 500 "invalid upgrade response".
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net'
import { connect, type TLSSocket } from 'node:tls'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

const CHUNK = new Uint8Array(64 * 1024).fill(97)

describe('upgrade requests core does not hand over', { timeout: 60_000 }, () => {
  let listener: TlsListener
  const seen: string[] = []
  /** Set when an endless answer's source learned that its client went, with whether the request's signal was aborted. */
  let endlessCancelled: ((aborted: boolean) => void) | undefined

  /** A backend that answers every request with the head given for its path, then an endless body. */
  let backend: Server
  const backendHeads: Record<string, string> = {
    '/switch': 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nstream-bytes',
    '/ok': 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nnot a stream',
    '/refused': 'HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nno',
    // As Go's http.Error answers on a kept-alive connection: a length, and the connection left open.
    '/refused-kept': 'HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nforbidden',
    '/refused-chunked': 'HTTP/1.1 400 Bad Request\r\ntransfer-encoding: chunked\r\n\r\n3\r\nbad\r\n0\r\n\r\n',
  }
  /** Everything each kept-open backend connection received, in order. */
  const backendReceived: string[] = []

  const handler: FetchHandler = {
    fetch: async (request, connection) => {
      seen.push(request.url)
      const path = new URL(request.url).pathname
      if (path.startsWith('/handoff/')) {
        const target = { origin: `http://127.0.0.1:${(backend.address() as AddressInfo).port}` }
        connection?.passUpgrade?.({ target, request: { method: 'GET', path: path.slice('/handoff'.length), headers: new Headers({ connection: 'Upgrade', upgrade: 'websocket' }) } })
        return new Response(null, { status: 200 })
      }
      if (path !== '/endless') return new Response(`answer for ${path}`, { headers: { 'content-type': 'text/plain' } })
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent++
          controller.enqueue(CHUNK)
        },
        cancel() {
          endlessCancelled?.(request.signal.aborted)
        },
      })
      return new Response(body, { headers: { 'x-sent-before-answer': String(sent) } })
    },
  }

  before(async () => {
    const ca = await createCertificateAuthority({ commonName: 'upgrade-test-ca' })
    const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    listener = await serveTls(handler, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
    backend = createTcpServer((socket) => {
      socket.on('error', () => {})
      let text = ''
      let answered = false
      const index = backendReceived.push('') - 1
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1')
        backendReceived[index] = text
        const path = /^GET (\S+) /.exec(text)?.[1]
        if (answered || !path || !text.includes('\r\n\r\n')) return
        answered = true
        // The stream and the kept-alive refusals stay open; the others end their answer by closing, as an HTTP/1.0-style body does.
        if (path === '/switch' || path.startsWith('/refused-')) socket.write(backendHeads[path] ?? '')
        else socket.end(backendHeads[path] ?? 'HTTP/1.1 404 Not Found\r\n\r\n')
      })
    })
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    await listener.close()
    await new Promise((resolve) => backend.close(resolve))
  })

  /** Sends a raw request head asking for a WebSocket upgrade; resolves with the socket once connected. */
  async function upgradeRequest(path: string, host: string): Promise<TLSSocket> {
    const socket = connect({ host: '127.0.0.1', port: listener.port, rejectUnauthorized: false })
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject))
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`)
    return socket
  }

  function readAll(socket: TLSSocket): Promise<string> {
    return new Promise((resolve) => {
      let text = ''
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')))
      socket.on('close', () => resolve(text))
    })
  }

  it("answers from the request line's path, and refuses a Host header that would rewrite it", async () => {
    const plain = await readAll(await upgradeRequest('/version', `127.0.0.1:${listener.port}`))
    assert.match(plain, /^HTTP\/1\.1 200 OK\r\n/)
    assert.ok(plain.endsWith('answer for /version'), plain)
    seen.length = 0
    const rewritten = await readAll(await upgradeRequest('/version', 'x/api/v1/namespaces/kube-system/secrets?'))
    assert.match(rewritten, /^HTTP\/1\.1 400 Bad Request\r\n/)
    assert.match(rewritten, /"message":"Invalid host header"/)
    assert.deepEqual(seen, [], 'the request reached the handler')
  })

  it("passes a backend's 101 and its stream to the client, and its error as it is", async () => {
    const switched = await upgradeRequest('/handoff/switch', `127.0.0.1:${listener.port}`)
    const first = await new Promise<string>((resolve) => {
      let text = ''
      switched.on('data', (d: Buffer) => {
        text += d.toString('latin1')
        if (text.includes('stream-bytes')) resolve(text)
      })
    })
    switched.destroy()
    assert.match(first, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*\r\n\r\nstream-bytes$/)
    const refused = await readAll(await upgradeRequest('/handoff/refused', `127.0.0.1:${listener.port}`))
    assert.equal(refused, backendHeads['/refused'])
  })

  // CVE-2018-1002105: a backend that refuses the upgrade but keeps its connection (as a node agent's Go server does)
  // must never get what the client sends next, on the connection the server opened with its own credentials.
  for (const path of ['/refused-kept', '/refused-chunked']) {
    it(`passes a refusal kept alive (${path}) on and closes both connections, sending nothing more to the backend`, async () => {
      const socket = await upgradeRequest(`/handoff${path}`, `127.0.0.1:${listener.port}`)
      const received = readAll(socket)
      await new Promise((resolve) => setTimeout(resolve, 100))
      socket.write('GET /run/kube-system/etcd/etcd?cmd=cat+server.key HTTP/1.1\r\nHost: agent\r\n\r\n')
      // Closed by the server once the refusal is passed on; a joined connection would stay open.
      const closed = await Promise.race([received.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 3000))])
      const [mine] = backendReceived.filter((text) => text.startsWith(`GET ${path} `))
      assert.ok(mine, 'the backend got the upgrade request')
      assert.ok(!mine.includes('/run/'), `the backend received the client's next request:\n${mine}`)
      assert.ok(closed, 'the connection was left open')
      assert.equal(await received, backendHeads[path])
      socket.destroy()
    })
  }

  it('refuses a backend that answers an upgrade with 200, as upstream, instead of passing its body on', async () => {
    const answer = await readAll(await upgradeRequest('/handoff/ok', `127.0.0.1:${listener.port}`))
    assert.match(answer, /^HTTP\/1\.1 500 Internal Server Error\r\n/)
    assert.match(answer, /"message":"invalid upgrade response: status code 200"/)
    assert.ok(!answer.includes('not a stream'), answer)
  })

  it('streams an endless answer as it comes, and cancels it with the request once the client goes', async () => {
    const cancelled = new Promise<boolean>((resolve) => (endlessCancelled = resolve))
    const socket = await upgradeRequest('/endless', `127.0.0.1:${listener.port}`)
    let received = 0
    // Read past the head and a few chunks, then leave without reading more.
    await new Promise<void>((resolve) => {
      socket.on('data', (d: Buffer) => {
        received += d.length
        if (received > 4 * CHUNK.length) resolve()
      })
    })
    socket.destroy()
    assert.equal(await cancelled, true, "the request's signal was not aborted when the answer was cancelled")
  })
})
