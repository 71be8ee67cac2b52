/**
 * The Node listener over TLS on a loopback port for a server under test,
 * with a serving certificate of a CA made for it, as the tests of what the
 * listener itself does (paths, header lines, warnings) start it.
 */
import { silentLogger } from '../../core/logging/logger.js'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'

export async function serveOnLoopback(server: FetchHandler): Promise<TlsListener> {
  const ca = await createCertificateAuthority({ commonName: 'node-listener-test-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  return serveTls(server, { host: '127.0.0.1', port: 0, key: serving.privateKey, cert: serving.certificate, logger: silentLogger })
}
