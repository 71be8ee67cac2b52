/**
 * The Node listener with both client CAs: which one verified a client's
 * chain reaches core as `verified` (client CA) or
 * `verifiedByRequestHeaderCA` (front-proxy CA); chains through an
 * intermediate are accepted; new CA bundles apply from the next handshake
 * (and to the next request of a connection already open:
 * node-client-cert-each-request.test.ts).
 */
import assert from 'node:assert/strict'
import { request as httpsRequest } from 'node:https'
import { after, before, describe, it } from 'node:test'
import {
  type CertificateAuthority,
  type CertificateKeyPair,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../core/pki/certificates.js'
import { silentLogger } from '../../core/logging/logger.js'
import { type ClientCertificate, type ConnectionInfo } from '../../core/ports.js'
import { type FetchHandler, serveTls, type TlsListener } from '../../runtimes/node/adapter/serve.js'
import { clientCertificateViaIntermediate, forgedIntermediate } from './openssl-chain.js'

const echo: FetchHandler = { fetch: async (_request, connection) => Response.json({ connection: connection ?? null }) }

/** A new connection each time (agent: false), so each call shows its own handshake's result. */
function certificateSeen(port: number, ca: string, client?: { cert: string; key: string }): Promise<ClientCertificate | undefined> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/', ca, ...client, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve((JSON.parse(body) as { connection: ConnectionInfo }).connection.clientCertificate))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const pair = (c: CertificateKeyPair) => ({ cert: c.certificate, key: c.privateKey })

describe('serveTls with a client CA and a front-proxy CA', () => {
  let clientCa: CertificateAuthority
  let proxyCa: CertificateAuthority
  let otherCa: CertificateAuthority
  let listener: TlsListener
  let alice: CertificateKeyPair
  let proxy: CertificateKeyPair
  let mallory: CertificateKeyPair

  before(async () => {
    clientCa = await createCertificateAuthority({ commonName: 'client-ca' })
    proxyCa = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    otherCa = await createCertificateAuthority({ commonName: 'other-ca' })
    const serving = await issueServingCertificate(clientCa, { commonName: 'apiserver', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] })
    alice = await issueClientCertificate(clientCa, { commonName: 'alice', organizations: ['dev'] })
    proxy = await issueClientCertificate(proxyCa, { commonName: 'front-proxy-client', organizations: [] })
    mallory = await issueClientCertificate(otherCa, { commonName: 'front-proxy-client', organizations: ['system:masters'] })
    listener = await serveTls(echo, {
      host: '127.0.0.1',
      port: 0,
      key: serving.privateKey,
      cert: serving.certificate,
      clientCA: clientCa.certificate,
      requestHeaderCA: proxyCa.certificate,
      logger: silentLogger,
    })
  })
  after(async () => {
    await listener.close()
  })

  it('marks a client CA certificate verified, and not as the proxy', async () => {
    assert.deepEqual(await certificateSeen(listener.port, clientCa.certificate, pair(alice)), { verified: true, commonName: 'alice', organizations: ['dev'] })
  })

  it('marks a front-proxy certificate as verified by the front-proxy CA only', async () => {
    const seen = await certificateSeen(listener.port, clientCa.certificate, pair(proxy))
    assert.equal(seen?.verified, false)
    assert.equal(seen?.verifiedByRequestHeaderCA, true)
    assert.equal(seen?.commonName, 'front-proxy-client')
  })

  it('verifies a certificate of another CA against neither', async () => {
    const seen = await certificateSeen(listener.port, clientCa.certificate, pair(mallory))
    assert.equal(seen?.verified, false)
    assert.equal(seen?.verifiedByRequestHeaderCA, undefined)
    assert.ok(seen?.verifyError)
  })

  it("does not take a client CA user for the proxy when its chain adds a forged intermediate naming the front-proxy CA", async () => {
    // The handshake verifies alice through the client CA; Node's chain, matched by names and key ids, runs on to the front-proxy CA.
    const forged = forgedIntermediate(clientCa.certificate, proxyCa.certificate)
    const seen = await certificateSeen(listener.port, clientCa.certificate, { cert: `${alice.certificate.trimEnd()}\n${forged}`, key: alice.privateKey })
    assert.deepEqual(seen, { verified: true, commonName: 'alice', organizations: ['dev'] })
  })

  it('does not take the proxy for a client CA user when its chain adds a forged intermediate naming the client CA', async () => {
    const forged = forgedIntermediate(proxyCa.certificate, clientCa.certificate)
    const seen = await certificateSeen(listener.port, clientCa.certificate, { cert: `${proxy.certificate.trimEnd()}\n${forged}`, key: proxy.privateKey })
    assert.equal(seen?.verified, false)
    assert.equal(seen?.verifiedByRequestHeaderCA, true)
    assert.equal(seen?.verifyError, 'signed by a CA other than the client CA')
  })

  it('trusts new bundles from the next handshake on, with intermediate chains', async () => {
    const chained = clientCertificateViaIntermediate('carol', 'ops')
    const client = { cert: chained.certificateChain, key: chained.privateKey }
    assert.equal((await certificateSeen(listener.port, clientCa.certificate, client))?.verified, false)
    listener.setClientCAs({ clientCA: clientCa.certificate + chained.root, requestHeaderCA: proxyCa.certificate })
    assert.deepEqual(await certificateSeen(listener.port, clientCa.certificate, client), { verified: true, commonName: 'carol', organizations: ['ops'] })
    // The front-proxy CA moved to the client CA file: its certificates are client users now, no longer the proxy.
    listener.setClientCAs({ clientCA: clientCa.certificate + proxyCa.certificate })
    assert.deepEqual(await certificateSeen(listener.port, clientCa.certificate, pair(proxy)), { verified: true, commonName: 'front-proxy-client', organizations: [] })
  })

  it('keeps the bundles it has when new ones do not parse', async () => {
    assert.throws(() => listener.setClientCAs({ clientCA: 'not a certificate' }), /--client-ca-file: no certificate found/)
    assert.equal((await certificateSeen(listener.port, clientCa.certificate, pair(alice)))?.verified, true)
  })
})
