/**
 * HTTP/1.1 requests pipelined on one connection are served one after the
 * other, as Go's server reads a connection's next request only once the
 * one before it is answered: a client that sends thousands of requests and
 * reads no answer holds one handler at a time, not thousands, and the
 * listener stops reading its connection meanwhile.
 */
import assert from 'node:assert/strict'
import { connect, type TLSSocket } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

describe('pipelined HTTP/1.1 requests on the Node listener', () => {
  let listener: TlsListener
  let ca: string
  let open = 0
  let mostOpen = 0

  before(async () => {
    const authority = await createCertificateAuthority({ commonName: 'test-ca' })
    const serving = await issueServingCertificate(authority, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    ca = authority.certificate
    listener = await serveTls(
      {
        fetch: async (request) => {
          open++
          mostOpen = Math.max(mostOpen, open)
          // A handler that takes a turn of the event loop, as a real one does.
          await new Promise((resolve) => setImmediate(resolve))
          open--
          return new Response(`${new URL(request.url).pathname}\n`)
        },
      },
      { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger },
    )
  })
  after(async () => {
    await listener?.close()
  })

  const connection = (): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: listener.port, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => resolve(socket))
      socket.once('error', reject)
    })
  const requests = (count: number): string =>
    Array.from({ length: count }, (_, i) => `GET /r/${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join('')

  it('answers every request in order, one handler at a time', async () => {
    mostOpen = 0
    const socket = await connection()
    const count = 300
    let text = ''
    socket.setEncoding('utf8')
    const all = new Promise<void>((resolve) =>
      socket.on('data', (chunk: string) => {
        text += chunk
        if ((text.match(/HTTP\/1\.1 200/g) ?? []).length === count && text.endsWith(`/r/${count - 1}\n`)) resolve()
      }),
    )
    socket.write(requests(count))
    await all
    socket.destroy()
    const paths = [...text.matchAll(/\r\n\r\n(\/r\/\d+)\n/g)].map((m) => m[1])
    assert.deepEqual(paths, Array.from({ length: count }, (_, i) => `/r/${i}`))
    assert.equal(mostOpen, 1, 'pipelined requests were served at once')
  })

  it('stops reading a connection whose answers are not read, and serves others meanwhile', async () => {
    const flooding = await connection()
    flooding.pause()
    mostOpen = 0
    // Some 20 MB of requests on offer; its answers never read.
    const batch = requests(1000)
    let offered = 0
    const offer = () => {
      while (offered < 200_000 && !flooding.destroyed) {
        offered += 1000
        if (!flooding.write(batch)) return void flooding.once('drain', offer)
      }
    }
    offer()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    // Another client is served at once.
    const other = await connection()
    const answered = new Promise<string>((resolve) => other.once('data', (chunk: Buffer) => resolve(chunk.toString())))
    other.write('GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    assert.match(await answered, /^HTTP\/1\.1 200/)
    other.destroy()
    flooding.destroy()
    // One handler for the flooding connection at any time, and one for the other client.
    assert.ok(mostOpen <= 2, `${mostOpen} handlers at once`)
  })
})
