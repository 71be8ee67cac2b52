/**
 * The Node listener tells core how many bytes of headers it lets through
 * (`ConnectionInfo.headerBytesLimit`), and core then skips its own count
 * (Go's 1 MiB, core/machinery/limits.ts). That holds only while Node
 * refuses more itself: these requests carry just under and just over the
 * stated bound, over HTTP/1.1 and HTTP/2, and the ones over must never
 * reach the handler.
 */
import assert from 'node:assert/strict'
import { request } from 'node:https'
import { connect } from 'node:http2'
import { after, before, describe, it } from 'node:test'
import { MAX_HEADER_BYTES } from '../../core/machinery/limits.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import type { ConnectionInfo } from '../../core/ports.js'
import { HTTP2_MAX_HEADER_LIST_BYTES, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

/** Headers of `total` bytes in all, in values of at most 8 KiB (one HTTP/2 field may not take the whole list). */
const headersOf = (total: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: Math.ceil(total / 8192) }, (_, i) => [`x-filler-${i}`, 'a'.repeat(Math.min(8192, total - i * 8192))]))

describe('header limits of the Node listener', () => {
  let listener: TlsListener
  let ca: string
  const seen: ConnectionInfo[] = []
  let lastRequest: Request | undefined

  before(async () => {
    const authority = await createCertificateAuthority({ commonName: 'test-ca' })
    const serving = await issueServingCertificate(authority, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    ca = authority.certificate
    listener = await serveTls(
      {
        fetch: async (request, connection) => {
          lastRequest = request
          if (connection) seen.push(connection)
          return new Response('reached')
        },
      },
      { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger },
    )
  })
  after(async () => {
    await listener?.close()
  })

  /** The status, or 'reset' when the connection closed before one was read (Node closes it after a 431, perhaps while the client still writes). */
  const http1 = (headers: Record<string, string>): Promise<number | 'reset'> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: listener.port, path: '/', ca, agent: false, headers }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode!))
      })
      req.on('error', () => resolve('reset'))
      req.end()
    })

  const http2 = (headers: Record<string, string>): Promise<number | 'reset'> =>
    new Promise((resolve) => {
      const session = connect(`https://127.0.0.1:${listener.port}`, { ca, settings: { maxHeaderListSize: 4 * MAX_HEADER_BYTES } })
      session.on('error', () => resolve('reset'))
      const stream = session.request({ ':path': '/', ...headers })
      let status: number | undefined
      stream.on('response', (h) => (status = Number(h[':status'])))
      stream.on('error', () => resolve('reset'))
      stream.on('close', () => {
        session.close()
        resolve(status ?? 'reset')
      })
      stream.resume()
      stream.end()
    })

  /** As many header lines, each its own name, as `count`; the handler counts those it was given. */
  const manyLines = (count: number): Record<string, string> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-line-${i}`, 'v']))
  const linesSeen = (): number => [...(lastRequest?.headers.keys() ?? [])].filter((name) => name.startsWith('x-line-')).length

  it('HTTP/1.1: passes on every header line, however many, as Go bounds them by bytes alone', async () => {
    assert.equal(await http1(manyLines(5000)), 200)
    assert.equal(linesSeen(), 5000)
  })

  it('HTTP/2: passes on every header field the list\'s bytes allow, however many', async () => {
    // About 42 bytes each as HTTP/2 counts them: 1,400 fields within 64 KiB.
    assert.equal(await http2(manyLines(1400)), 200)
    assert.equal(linesSeen(), 1400)
  })

  it('states bounds within the server\'s own', () => {
    assert.ok(HTTP2_MAX_HEADER_LIST_BYTES <= MAX_HEADER_BYTES)
  })

  it('HTTP/1.1: serves headers under the stated bound and refuses more before the handler', async () => {
    seen.length = 0
    assert.equal(await http1(headersOf(4096)), 200)
    const limit = seen[0]?.headerBytesLimit
    assert.equal(limit, MAX_HEADER_BYTES, "Go's bound, as upstream's server")
    // A bearer token of many groups: past Node's own default of 16 KiB.
    assert.equal(await http1(headersOf(64 * 1024)), 200)
    seen.length = 0
    assert.ok([431, 'reset'].includes(await http1(headersOf(limit + 1))))
    assert.equal(seen.length, 0, 'the handler was not reached')
  })

  it('HTTP/2: serves headers under the stated bound and refuses more before the handler', async () => {
    seen.length = 0
    assert.equal(await http2(headersOf(4096)), 200)
    assert.equal(seen[0]?.headerBytesLimit, HTTP2_MAX_HEADER_LIST_BYTES)
    seen.length = 0
    for (const total of [HTTP2_MAX_HEADER_LIST_BYTES + 1, MAX_HEADER_BYTES + 1]) assert.notEqual(await http2(headersOf(total)), 200, `${total} bytes`)
    assert.equal(seen.length, 0, 'the handler was not reached')
  })
})
