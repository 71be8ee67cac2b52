/**
 * HTTP/1.1 requests that ask for an upgrade on the Node listener, which core
 * does not hand to a backend (anything but exec, attach and port-forward):
 * the answer streams to the client as it comes, a client that goes cancels
 * it (a watch ends instead of gathering events for an hour), and the URL is
 * the request line's, never one a Host header rewrites.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
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

  const handler: FetchHandler = {
    fetch: async (request) => {
      seen.push(request.url)
      const path = new URL(request.url).pathname
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
  })
  after(async () => {
    await listener.close()
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
