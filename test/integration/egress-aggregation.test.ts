/**
 * An aggregated API server reached through the `cluster` egress proxy: the
 * availability probe and the proxied requests both ask a real HTTP CONNECT
 * proxy (on a unix socket) for the extension server's endpoint, which still
 * sees the aggregator's client certificate through the tunnel. With the
 * proxy gone, the group answers 503 and the extension server is not reached.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY } from '../../core/index.js'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { egressDialers } from '../../runtimes/node/adapter/egress-dialer.js'
import { nodeProxyTransport, type NodeProxyTransport } from '../../runtimes/node/daemon/proxy-transport.js'
import { type ConnectProxy, startUnixConnectProxy } from './connect-proxy.js'
import { exposeExtensionServer, type ExtensionServer, frontProxyRequestHeader, startExtensionServer, WARDLE, WARDLE_GV } from './extension-apiserver.js'
import { createTestServer, eventually, TestClient } from './harness.js'

const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices'
const FLUNDERS = `/apis/${WARDLE_GV}/namespaces/wardle/flunders`

describe('an aggregated API server through the cluster egress proxy', () => {
  let dir: string
  let ext: ExtensionServer
  let proxy: ConnectProxy
  let transport: NodeProxyTransport
  let api: TestClient

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egress-agg-'))
    const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
    ext = await startExtensionServer(proxyCA.certificate, ['front-proxy-client'])
    proxy = await startUnixConnectProxy(join(dir, 'cluster.sock'))
    transport = nodeProxyTransport(await egressDialers(new Map([['cluster', { kind: 'uds', socketPath: proxy.address }]])))
    const server = createTestServer(
      {
        embeddedIdentity: ADMIN_IDENTITY,
        authentication: {
          requestHeader: frontProxyRequestHeader(proxyCA.certificate),
        },
        aggregation: {
          enableAggregatorRouting: true,
          proxyClientCertificate: { certificate: proxyClient.certificate, key: proxyClient.privateKey },
          availabilityIntervalMs: 200,
        },
      },
      { proxyTransport: transport },
    )
    await server.ready
    api = new TestClient(server)
    const created = async (path: string, body: unknown) => {
      const r = await api.post(path, body)
      assert.equal(r.status, 201, r.text)
    }
    await exposeExtensionServer(api, ext)
    await created(APISERVICES, {
      metadata: { name: `v1alpha1.${WARDLE}` },
      spec: { group: WARDLE, version: 'v1alpha1', service: { namespace: 'wardle', name: 'api', port: 443 }, caBundle: ext.caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    })
  })

  after(async () => {
    await api?.server.shutdown()
    transport?.close()
    await proxy?.close()
    await ext?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('probes and proxies through the tunnel, the extension server seeing the aggregator certificate', async () => {
    await eventually('the APIService is Available', async () => {
      const r = await api.get(`${APISERVICES}/v1alpha1.${WARDLE}`)
      return r.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True')
    })
    const list = await api.get(FLUNDERS)
    assert.equal(list.status, 200, list.text)
    assert.ok(proxy.connects.length > 0)
    assert.ok(proxy.connects.every((c) => c.target === `127.0.0.1:${ext.port}`), JSON.stringify(proxy.connects))
    assert.equal(ext.seen.at(-1)?.clientCommonName, 'front-proxy-client')
  })

  it('answers 503 with the proxy gone, the extension server not reached', async () => {
    await proxy.close()
    transport.close()
    const seen = ext.seen.length
    const list = await api.get(FLUNDERS)
    assert.equal(list.status, 503, list.text)
    // The list did not get through; an availability probe already under way through the old tunnel may have.
    assert.deepEqual(
      ext.seen.slice(seen).filter((r) => r.path.includes('/flunders')),
      [],
    )
  })
})
