/**
 * serveTls with `reusePort` (the embedding API behind `--permit-port-sharing`)
 * under the Node running the tests: where Node binds with SO_REUSEPORT, two
 * listeners share one port and both answer; where it would drop the option,
 * serveTls rejects rather than bind the port exclusively.
 */
import assert from 'node:assert/strict'
import { request } from 'node:https'
import { after, it } from 'node:test'
import { createCertificateAuthority, issueServingCertificate } from '../../core/pki/certificates.js'
import { reusePortWorks } from '../../runtimes/node/adapter/reuse-port.js'
import { serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'
import { createTestServer } from './harness.js'

const silentLogger = { debug() {}, info() {}, warn() {}, error() {} }
const TOKEN = 'reuse-port-admin-token'
// One server behind every listener: which listener answers does not matter to it.
const server = createTestServer({ authentication: { tokens: [{ token: TOKEN, user: { username: 'admin', groups: ['system:masters'] } }] } })
const listeners: TlsListener[] = []
after(async () => {
  await Promise.all(listeners.map((l) => l.close()))
  await server.shutdown()
})

async function servingOptions(): Promise<{ host: string; key: string; cert: string; ca: string; logger: typeof silentLogger }> {
  const ca = await createCertificateAuthority({ commonName: 'serving-ca' })
  const serving = await issueServingCertificate(ca, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
  return { host: '127.0.0.1', key: serving.privateKey, cert: serving.certificate, ca: ca.certificate, logger: silentLogger }
}

function versionStatus(port: number, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/version', agent: false, ca, headers: { authorization: `Bearer ${TOKEN}` }, timeout: 15_000 }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')))
    req.on('error', reject)
    req.end()
  })
}

const shares = await reusePortWorks()

it('rejects reusePort where this Node would bind the port exclusively', { skip: shares && `Node ${process.versions.node} binds with SO_REUSEPORT` }, async () => {
  const { ca: _ca, ...opts } = await servingOptions()
  await assert.rejects(serveTls(server, { ...opts, port: 0, reusePort: true }), /reusePort: this runtime cannot bind with SO_REUSEPORT/)
})

it('binds two listeners to one port with reusePort; the second serves it once the first closes', { skip: !shares && `Node ${process.versions.node} cannot bind with SO_REUSEPORT` }, async () => {
  const { ca, ...opts } = await servingOptions()
  const first = await serveTls(server, { ...opts, port: 0, reusePort: true })
  listeners.push(first)
  const second = await serveTls(server, { ...opts, port: first.port, reusePort: true })
  listeners.push(second)
  assert.equal(second.port, first.port)
  await first.close()
  // The port stays served by the second listener alone.
  assert.equal(await versionStatus(first.port, ca), 200)
})
