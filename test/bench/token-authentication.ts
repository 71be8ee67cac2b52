/**
 * What a bearer token costs on a GET: a static token, a JWT the server has
 * accepted before (answered by the token cache), and JWTs seen for the first
 * time (signature check and claim mapping), side by side in one run against
 * an HTTPS issuer on 127.0.0.1. The goal: a cached JWT costs under 5% more
 * than a static token. Figures only: nothing passes or fails.
 *
 * Part of `npm run bench`; run alone with `node --import tsx test/bench/token-authentication.ts`: it
 * rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { join } from 'node:path'
import { loadAuthenticationConfiguration } from '../../core/config/authentication.js'
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from '../../core/index.js'
import { useSha256Hex } from '../../core/authn/constant-time.js'
import { useLazyResponseBodies } from '../../core/http/bytes-response.js'
import { nativeSha256Hex } from '../../runtimes/node/adapter/native-sha256.js'
import { nodeWebhookClient } from '../../runtimes/node/daemon/webhook-client.js'
import { OidcIssuer } from '../fixtures/oidc-issuer.js'
import { ms } from './format.js'
import { combineLoads, type LoadResult, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const CONFIGMAP = 'http://in-process/api/v1/namespaces/default/configmaps/bench'
/** Each kind is measured in this many alternating rounds, so drift of the machine hits both alike. */
const ROUNDS = 4
const PER_ROUND = { total: 2000, concurrency: 1, maxSeconds: 10 }
const FIRST_USE = { total: 300, concurrency: 1, maxSeconds: 20 }

interface Figures {
  staticToken: LoadResult
  cachedJwt: LoadResult
  firstUseJwt: LoadResult
  serviceAccountToken: LoadResult
  firstUseServiceAccountToken: LoadResult
}

/** A bound service-account token of `default/default`, asked of the server through TokenRequest. */
async function serviceAccountToken(server: ApiServer): Promise<string> {
  const res = await server.fetch(
    new Request('http://in-process/api/v1/namespaces/default/serviceaccounts/default/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }),
    }),
  )
  if (res.status !== 201) throw new Error(`TokenRequest answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { status: { token: string } }).status.token
}

async function getWith(server: ApiServer, token: string): Promise<boolean> {
  const res = await server.fetch(new Request(CONFIGMAP, { headers: { authorization: `Bearer ${token}` } }), {})
  await res.arrayBuffer()
  return res.status === 200
}

export async function measureTokenAuthentication(): Promise<Figures> {
  // As the package's Node entry points set the core up: Node's SHA-256 for the tokens' digests, lazy answer bodies.
  if (nativeSha256Hex) useSha256Hex(nativeSha256Hex)
  useLazyResponseBodies()
  const issuer = await OidcIssuer.start()
  const client = nodeWebhookClient()
  const config = loadAuthenticationConfiguration(
    JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: { url: issuer.url, certificateAuthority: issuer.caPem, audiences: ['kubernetes'] },
          claimMappings: { username: { claim: 'sub', prefix: 'oidc:' }, groups: { expression: "claims.?groups.orValue([])" } },
        },
      ],
    }),
    'bench.json',
  )
  const user = { username: 'static', groups: ['dev'] }
  const server = createApiServer(
    { embeddedIdentity: ADMIN_IDENTITY, authentication: { tokens: [{ token: 'static-token', user }], jwt: config.jwt } },
    { webhookClient: client },
  )
  await server.ready
  const created = await server.fetch(
    new Request('http://in-process/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench' }, data: { key: 'value' } }),
    }),
  )
  if (created.status !== 201) throw new Error(`creating the ConfigMap answered ${created.status}`)
  const jwt = await issuer.token({ groups: ['dev'] })
  const saToken = await serviceAccountToken(server)

  // Warm-up, unmeasured: the JIT, and the JWT verified once.
  for (const token of ['static-token', jwt, saToken]) await runLoad({ total: 2000, concurrency: 1, maxSeconds: 10 }, () => getWith(server, token))

  const staticRuns: LoadResult[] = []
  const jwtRuns: LoadResult[] = []
  const saRuns: LoadResult[] = []
  for (let round = 0; round < ROUNDS; round++) {
    staticRuns.push(await runLoad(PER_ROUND, () => getWith(server, 'static-token')))
    jwtRuns.push(await runLoad(PER_ROUND, () => getWith(server, jwt)))
    saRuns.push(await runLoad(PER_ROUND, () => getWith(server, saToken)))
  }
  const fresh = await Promise.all(Array.from({ length: FIRST_USE.total }, (_, i) => issuer.token({ sub: `user-${i}` })))
  const firstUseJwt = await runLoad(FIRST_USE, (i) => getWith(server, fresh[i]!))
  const freshSa: string[] = []
  for (let i = 0; i < FIRST_USE.total; i++) freshSa.push(await serviceAccountToken(server))
  const firstUseServiceAccountToken = await runLoad(FIRST_USE, (i) => getWith(server, freshSa[i]!))

  await server.shutdown()
  client.close()
  await issuer.down()
  return { staticToken: combineLoads(staticRuns), cachedJwt: combineLoads(jwtRuns), firstUseJwt, serviceAccountToken: combineLoads(saRuns), firstUseServiceAccountToken }
}

const BEGIN = '<!-- token-authentication: begin -->'
const END = '<!-- token-authentication: end -->'

const percent = (a: number, b: number): string => `${((a / b - 1) * 100).toFixed(1)}%`

export function renderTokenSection(f: Figures, date: Date): string {
  const row = (what: string, r: LoadResult) => `| ${what} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${Math.round(r.perSecond).toLocaleString('en-US')}/s | ${r.count} |`
  return `${BEGIN}
## Bearer tokens on a GET

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/token-authentication.ts\`.

One client GETs a ConfigMap, one request at a time, through \`server.fetch\`
as a network request (in process, memory storage, the core set up as the
package's Node entry points set it up), authenticated by a static token
(\`--token-auth-file\`), by a JWT the server accepted before (answered by the
token cache, as upstream's keeps a token's answer ten seconds), and by JWTs it
sees for the first time (RS256 signature check and claim mapping, keys
already fetched); then by a bound service-account token (TokenRequest), used
again and again (the token cache again) and by ones seen for the first time
(signature, claims and the service account looked up). The three reused
tokens alternate in ${ROUNDS} rounds; the goal is a cached JWT costing under
5% more than a static token.

| GET one ConfigMap with | p50 | p99 | rate | n |
| --- | --- | --- | --- | --- |
${row('a static token', f.staticToken)}
${row('a cached JWT', f.cachedJwt)}
${row('a JWT seen for the first time', f.firstUseJwt)}
${row('a service-account token used before', f.serviceAccountToken)}
${row('a service-account token seen for the first time', f.firstUseServiceAccountToken)}

A cached JWT costs **${percent(f.cachedJwt.p50Ms, f.staticToken.p50Ms)}** at p50 (rate ${((1 - f.cachedJwt.perSecond / f.staticToken.perSecond) * 100).toFixed(1)}% lower) against a
static token; a first use costs ${percent(f.firstUseJwt.p50Ms, f.staticToken.p50Ms)} at p50.
A service-account token used before costs ${percent(f.serviceAccountToken.p50Ms, f.staticToken.p50Ms)} at p50 against a static token,
one seen for the first time ${percent(f.firstUseServiceAccountToken.p50Ms, f.staticToken.p50Ms)}.
${END}
`
}

/** Puts the section into docs/benchmarks.md in place of its previous version, or at the end. */
export async function writeTokenSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureTokenAuthentication()
  const section = renderTokenSection(figures, new Date())
  await writeTokenSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
