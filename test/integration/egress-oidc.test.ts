/**
 * A JWT issuer's `egressSelectorType`: with `controlplane`, discovery and
 * the key set are fetched through the control-plane HTTP CONNECT proxy (a
 * real one on a unix socket that records its targets), and a token verifies;
 * an issuer without the field is fetched directly, the proxy never asked.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { loadAuthenticationConfiguration, type LoadedJWTAuthenticator } from '../../core/config/authentication.js'
import { ADMIN_IDENTITY, createApiServer } from '../../core/index.js'
import { egressDialers } from '../../runtimes/node/adapter/egress-dialer.js'
import { nodeWebhookClient, type NodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { OidcIssuer } from '../fixtures/oidc-issuer.js'
import { type ConnectProxy, startUnixConnectProxy } from './connect-proxy.js'
import { eventually, TestClient } from './harness.js'

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const REVIEW = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }

function jwtConfig(issuer: OidcIssuer, egressSelectorType?: string): LoadedJWTAuthenticator[] {
  const file = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: issuer.url, certificateAuthority: issuer.caPem, audiences: ['kubernetes'], ...(egressSelectorType ? { egressSelectorType } : {}) },
        claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } },
      },
    ],
  }
  return loadAuthenticationConfiguration(JSON.stringify(file), 'auth.json').jwt
}

describe("a JWT issuer's egressSelectorType", () => {
  let dir: string
  let issuer: OidcIssuer
  let proxy: ConnectProxy
  let client: NodeWebhookClient
  const servers: ReturnType<typeof createApiServer>[] = []

  async function start(jwt: LoadedJWTAuthenticator[]): Promise<TestClient> {
    const server = createApiServer(
      { embeddedIdentity: ADMIN_IDENTITY, authentication: { jwt, jwtKeyFetch: { retryMs: 20, minRefreshIntervalMs: 0 } } },
      { webhookClient: client },
    )
    servers.push(server)
    await server.ready
    return new TestClient(server)
  }

  /** Asks until the issuer's keys are in (discovery retries in the background) and answers the reviewed username. */
  async function whoAmI(api: TestClient): Promise<string> {
    const token = await issuer.token({})
    let username = ''
    await eventually('the token verifies', async () => {
      const r = await api.post(WHOAMI, REVIEW, { connection: {}, headers: { authorization: `Bearer ${token}` } })
      if (r.status === 201) username = r.body.status.userInfo.username as string
      return r.status === 201
    })
    return username
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egress-oidc-'))
    issuer = await OidcIssuer.start()
    proxy = await startUnixConnectProxy(join(dir, 'controlplane.sock'))
    client = nodeWebhookClient(await egressDialers(new Map([['controlplane', { kind: 'uds', socketPath: proxy.address }]])))
  })

  after(async () => {
    await Promise.all(servers.map((s) => s.shutdown()))
    client?.close()
    await issuer?.down()
    await proxy?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('fetches discovery and keys through the control-plane proxy when the issuer says controlplane', async () => {
    const api = await start(jwtConfig(issuer, 'controlplane'))
    assert.match(await whoAmI(api), /^oidc:/)
    const host = new URL(issuer.url).host
    assert.ok(proxy.connects.length > 0 && proxy.connects.every((c) => c.target === host), JSON.stringify(proxy.connects))
  })

  it('fetches directly when the issuer names no egress selection', async () => {
    client.close()
    const asked = proxy.connects.length
    const api = await start(jwtConfig(issuer))
    assert.match(await whoAmI(api), /^oidc:/)
    assert.equal(proxy.connects.length, asked)
  })
})
