/**
 * The authenticating proxy, anonymous conditions and the published trust
 * ConfigMap, through `fetch` with the ConnectionInfo a TLS listener gives:
 * which CA verified the client certificate decides whether identity headers
 * are believed.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApiServerOptions, ClientCertificate, ConnectionInfo } from '../../core/index.js'
import { startServer, type TestClient } from './harness.js'

const PROXY_CA = '-----BEGIN CERTIFICATE-----\nproxy\n-----END CERTIFICATE-----\n'
const CLIENT_CA = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n'
const requestHeader = {
  usernameHeaders: ['X-Remote-User'],
  groupHeaders: ['X-Remote-Group'],
  uidHeaders: ['X-Remote-Uid'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
  allowedNames: ['front-proxy-client'],
  clientCA: PROXY_CA,
}
/** Everything is denied but to system:masters: the 403 message tells who the server thinks the caller is. */
const options: ApiServerOptions = { authorizationModes: ['AlwaysDeny'], authentication: { clientCA: CLIENT_CA, requestHeader } }

function viaCertificate(cert: Partial<ClientCertificate> & { commonName: string }): ConnectionInfo {
  return { clientCertificate: { verified: false, organizations: [], ...cert } }
}
const proxy = viaCertificate({ commonName: 'front-proxy-client', verifiedByRequestHeaderCA: true })
const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }
const configMaps = '/api/v1/namespaces/default/configmaps'
const asAdmin = { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' }

async function assertNotStored(api: TestClient, name: string): Promise<void> {
  // In-process calls run as the administrator in these tests (createTestServer).
  assert.equal((await api.get(`${configMaps}/${name}`)).status, 404)
}

describe('front proxy (request header authentication)', () => {
  it('believes the user, groups, uid and extras a verified, allowed proxy names', async () => {
    const api = await startServer(options)
    const r = await api.post(whoami, review, {
      connection: proxy,
      headers: { ...asAdmin, 'x-remote-uid': 'u-1', 'x-remote-extra-scopes': 'view', 'x-remote-extra-acme.com%2fproject': 'p1' },
    })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.status.userInfo, {
      username: 'admin',
      uid: 'u-1',
      groups: ['system:masters', 'system:authenticated'],
      extra: { 'acme.com/project': ['p1'], scopes: ['view'] },
    })
  })

  it('authorizes the proxied user, not the proxy', async () => {
    const api = await startServer(options)
    const r = await api.post(configMaps, { metadata: { name: 'proxied' } }, { connection: proxy, headers: { 'x-remote-user': 'alice' } })
    assert.equal(r.status, 403)
    assert.equal(r.body.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"')
    await assertNotStored(api, 'proxied')
  })

  it('ignores the headers of a certificate another CA signed: the client CA user it is, nothing more', async () => {
    const api = await startServer(options)
    const otherCa = viaCertificate({ commonName: 'front-proxy-client', verified: true })
    const r = await api.post(configMaps, { metadata: { name: 'other-ca' } }, { connection: otherCa, headers: asAdmin })
    assert.equal(r.status, 403)
    assert.match(r.body.message, /^configmaps is forbidden: User "front-proxy-client" cannot create/)
    await assertNotStored(api, 'other-ca')
  })

  it('refuses with 401 a certificate no trusted CA verified, whatever its headers say', async () => {
    const api = await startServer(options)
    const forged = viaCertificate({ commonName: 'front-proxy-client', verifyError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' })
    const r = await api.post(configMaps, { metadata: { name: 'forged' } }, { connection: forged, headers: asAdmin })
    assert.equal(r.status, 401)
    assert.equal(r.body.reason, 'Unauthorized')
    await assertNotStored(api, 'forged')
  })

  it('refuses with 401 a front-proxy certificate whose common name is not allowed', async () => {
    const api = await startServer(options)
    const mallory = viaCertificate({ commonName: 'mallory', verifiedByRequestHeaderCA: true })
    const r = await api.post(configMaps, { metadata: { name: 'not-allowed' } }, { connection: mallory, headers: asAdmin })
    assert.equal(r.status, 401)
    await assertNotStored(api, 'not-allowed')
  })

  it('accepts any common name the front-proxy CA signed when no names are listed', async () => {
    const api = await startServer({ ...options, authentication: { requestHeader: { ...requestHeader, allowedNames: [] } } })
    const other = viaCertificate({ commonName: 'another-proxy', verifiedByRequestHeaderCA: true })
    const r = await api.post(whoami, review, { connection: other, headers: asAdmin })
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.status.userInfo.username, 'admin')
  })

  it('never trusts the headers without a certificate: the request is anonymous', async () => {
    const api = await startServer(options)
    const r = await api.post(configMaps, { metadata: { name: 'no-cert' } }, { connection: {}, headers: asAdmin })
    assert.equal(r.status, 403)
    assert.match(r.body.message, /User "system:anonymous" cannot create/)
    await assertNotStored(api, 'no-cert')
  })

  it('does not make a front-proxy certificate a user by itself: without a user header it is refused with 401', async () => {
    const api = await startServer(options)
    const r = await api.post(configMaps, { metadata: { name: 'no-user' } }, { connection: proxy, headers: { 'x-remote-group': 'system:masters' } })
    assert.equal(r.status, 401)
    await assertNotStored(api, 'no-user')
  })

  it('publishes the client CA and the front-proxy settings in kube-system/extension-apiserver-authentication', async () => {
    const api = await startServer(options)
    const r = await api.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication')
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.body.data, {
      'client-ca-file': CLIENT_CA,
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-client-ca-file': PROXY_CA,
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-uid-headers': '["X-Remote-Uid"]',
      'requestheader-username-headers': '["X-Remote-User"]',
    })
  })

  it('publishes rotated CA bundles again, keeping the front-proxy settings, and leaves the ConfigMap alone when nothing changed', async () => {
    const api = await startServer(options)
    const path = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication'
    const before = (await api.get(path)).body
    const rotatedProxy = PROXY_CA + '-----BEGIN CERTIFICATE-----\nproxy-2\n-----END CERTIFICATE-----\n'
    await api.server.updateClientCAs({ clientCA: CLIENT_CA, requestHeaderCA: rotatedProxy })
    const afterProxy = (await api.get(path)).body
    assert.equal(afterProxy.data['requestheader-client-ca-file'], rotatedProxy)
    assert.equal(afterProxy.data['client-ca-file'], CLIENT_CA)
    assert.equal(afterProxy.data['requestheader-allowed-names'], '["front-proxy-client"]')
    assert.notEqual(afterProxy.metadata.resourceVersion, before.metadata.resourceVersion)
    const rotatedClient = '-----BEGIN CERTIFICATE-----\nclient-2\n-----END CERTIFICATE-----\n'
    await api.server.updateClientCAs({ clientCA: rotatedClient, requestHeaderCA: rotatedProxy })
    const afterClient = (await api.get(path)).body
    assert.equal(afterClient.data['client-ca-file'], rotatedClient)
    assert.equal(afterClient.data['requestheader-client-ca-file'], rotatedProxy)
    // The same bundles once more: no write.
    await api.server.updateClientCAs({ clientCA: rotatedClient, requestHeaderCA: rotatedProxy })
    assert.equal((await api.get(path)).body.metadata.resourceVersion, afterClient.metadata.resourceVersion)
  })

  it('puts back the rotated bundles over a ConfigMap someone edited meanwhile', async () => {
    const api = await startServer(options)
    const path = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication'
    const edited = (await api.get(path)).body
    assert.equal((await api.put(path, { ...edited, data: { 'client-ca-file': 'tampered' } })).status, 200)
    await api.server.updateClientCAs({ clientCA: CLIENT_CA, requestHeaderCA: PROXY_CA })
    const data = (await api.get(path)).body.data
    assert.equal(data['client-ca-file'], CLIENT_CA)
    assert.equal(data['requestheader-client-ca-file'], PROXY_CA)
  })
})

describe('anonymous requests', () => {
  it('lets anonymous requests through only on the paths of the configuration, even beside AlwaysAllow', async () => {
    const api = await startServer({ authentication: { anonymous: { paths: ['/healthz', '/version'] } } })
    assert.equal((await api.get('/healthz', { connection: {} })).status, 200)
    assert.equal((await api.get('/version', { connection: {} })).status, 200)
    // Exact paths only, as upstream compares them.
    assert.equal((await api.get('/healthz/etcd', { connection: {} })).status, 401)
    const r = await api.post(configMaps, { metadata: { name: 'anon' } }, { connection: {} })
    assert.equal(r.status, 401)
    await assertNotStored(api, 'anon')
  })

  it('turns --anonymous-auth off under AlwaysAllow and keeps it under another mode', async () => {
    const allowAll = await startServer({ authentication: { anonymous: true } })
    assert.equal((await allowAll.get('/healthz', { connection: {} })).status, 401)
    const denyAll = await startServer({ authorizationModes: ['AlwaysDeny'], authentication: { anonymous: true } })
    const r = await denyAll.get('/api/v1/namespaces', { connection: {} })
    assert.equal(r.status, 403)
    assert.equal(r.body.message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope')
  })

  it('refuses a request with no credential with 401 when anonymous requests are off', async () => {
    const api = await startServer({ authorizationModes: ['AlwaysDeny'], authentication: { anonymous: false } })
    assert.equal((await api.get('/healthz', { connection: {} })).status, 401)
  })
})
