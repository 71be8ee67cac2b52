/**
 * The Node listener over TLS on a loopback port for a server under test,
 * with a serving certificate of a CA made for it, as the tests of what the
 * listener itself does (paths, header lines, warnings) start it.
 */
import { connect } from 'node:tls'
import { silentLogger } from '../../core/logging/logger.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { type FetchHandler, type ServeTlsOptions, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

export async function serveOnLoopback(server: FetchHandler, options: Partial<ServeTlsOptions> = {}): Promise<TlsListener> {
  const ca = await createCertificateAuthority({ commonName: 'node-listener-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  return serveTls(server, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger, ...options })
}

/** Sends a request line and headers exactly as written (no client tidies the path) and reads the whole answer; the head should ask `Connection: close`. */
export function sendRaw(port: number, head: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => socket.write(head))
    let text = ''
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')))
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }))
    socket.on('error', reject)
  })
}
