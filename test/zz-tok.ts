import { loadAuthenticationConfiguration } from '../core/config/authentication.js'
import { ADMIN_IDENTITY, createApiServer } from '../core/index.js'
import { nodeWebhookClient } from '../runtimes/node/daemon/webhook-client.js'
import { OidcIssuer } from './fixtures/oidc-issuer.js'
const CM = 'http://in-process/api/v1/namespaces/default/configmaps/bench'
async function main() {
  const issuer = await OidcIssuer.start()
  const client = nodeWebhookClient()
  const config = loadAuthenticationConfiguration(JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration',
    jwt: [{ issuer: { url: issuer.url, certificateAuthority: issuer.caPem, audiences: ['kubernetes'] }, claimMappings: { username: { claim: 'sub', prefix: 'oidc:' }, groups: { expression: "claims.?groups.orValue([])" } } }] }), 'bench.json')
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, authentication: { tokens: [{ token: 'static-token', user: { username: 'static', groups: ['dev'] } }], jwt: config.jwt } }, { webhookClient: client })
  await server.ready
  await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'bench' }, data: { key: 'value' } }) }))
  const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/serviceaccounts/default/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }) }))
  const sa = (await res.json() as any).status.token
  const jwt = await issuer.token({ groups: ['dev'] })
  const which = process.argv[2] ?? 'jwt'
  const token = which === 'jwt' ? jwt : which === 'sa' ? sa : 'static-token'
  const get = async () => { const r = await server.fetch(new Request(CM, { headers: { authorization: `Bearer ${token}` } }), {}); await r.arrayBuffer(); if (r.status !== 200) throw new Error(String(r.status)) }
  for (let i = 0; i < 3000; i++) await get()
  const t0 = performance.now(); const c0 = process.cpuUsage()
  const N = 20000
  for (let i = 0; i < N; i++) await get()
  const cpu = process.cpuUsage(c0); const t = performance.now() - t0
  console.log(which, (t * 1000 / N).toFixed(1), 'µs wall', ((cpu.user + cpu.system) / N).toFixed(1), 'µs cpu')
  await server.shutdown(); client.close(); await issuer.down(); process.exit(0)
}
main()
