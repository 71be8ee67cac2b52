/**
 * What authorization costs per request: the same GET of a ConfigMap, by the
 * same token user, on a server under AlwaysAllow and on one under RBAC
 * holding a policy the size of upstream's default one (about seventy
 * cluster role bindings) plus the user's RoleBinding. Rounds alternate
 * between the two servers so that a machine busy for a while weighs on both.
 * Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/authorization.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
// The built code (dist), as the daemon runs it: `npm run build` first.
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { rbacAuthorizer } from '../../dist/core/authz/rbac/rbac-authorizer.js'
import { RbacIndex } from '../../dist/core/authz/rbac/rbac-index.js'
import { RbacRuleResolver } from '../../dist/core/authz/rbac/rule-resolver.js'
import type { KubeObject } from '../../dist/core/machinery/object.js'
import { ms } from './format.js'
import { type LoadResult, median, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const RBAC = 'http://in-process/apis/rbac.authorization.k8s.io/v1'
const CONFIGMAP = 'http://in-process/api/v1/namespaces/default/configmaps/settings'
const TOKEN = 'bench-token'
const ROUNDS = 6
const PER_ROUND = { total: 3000, concurrency: 1, maxSeconds: 10 }

export interface AuthorizationFigures {
  alwaysAllow: LoadResult[]
  rbac: LoadResult[]
  clusterRoleBindings: number
  /** One RBAC decision alone over the same policy, median µs. */
  decisionMicros: number
  /** The machine's one-minute load average at the end of the run. */
  loadAverage: number
}

async function post(server: ApiServer, url: string, body: unknown): Promise<void> {
  const res = await server.fetch(new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
  if (res.status !== 201) throw new Error(`${url}: ${res.status} ${await res.text()}`)
}

/** Cluster roles and bindings shaped like upstream's defaults: most bind system users and groups, a few every authenticated user. */
function policy(): { path: string; object: KubeObject }[] {
  const out: { path: string; object: KubeObject }[] = []
  const add = (path: string, kind: string, object: Omit<KubeObject, 'kind' | 'apiVersion'>) =>
    out.push({ path, object: { kind, apiVersion: 'rbac.authorization.k8s.io/v1', ...object } as KubeObject })
  const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name })
  const rule = (resources: string[]) => ({ verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps'], resources })
  for (let i = 0; i < 66; i++) {
    const name = `system:controller:c${i}`
    add(`${RBAC}/clusterroles`, 'ClusterRole', { metadata: { name }, rules: [rule([`r${i}`, 'events']), rule(['endpoints'])] })
    add(`${RBAC}/clusterrolebindings`, 'ClusterRoleBinding', { metadata: { name }, roleRef: ref('ClusterRole', name), subjects: [{ kind: 'ServiceAccount', name: `c${i}`, namespace: 'kube-system' }] })
  }
  for (const name of ['system:discovery', 'system:basic-user', 'system:public-info-viewer']) {
    add(`${RBAC}/clusterroles`, 'ClusterRole', { metadata: { name }, rules: [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/version'] }] })
    add(`${RBAC}/clusterrolebindings`, 'ClusterRoleBinding', {
      metadata: { name },
      roleRef: ref('ClusterRole', name),
      subjects: [{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }],
    })
  }
  add(`${RBAC}/namespaces/default/roles`, 'Role', { metadata: { name: 'config-reader', namespace: 'default' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }] })
  add(`${RBAC}/namespaces/default/rolebindings`, 'RoleBinding', {
    metadata: { name: 'config-reader', namespace: 'default' },
    roleRef: ref('Role', 'config-reader'),
    subjects: [{ kind: 'User', name: 'bench', apiGroup: 'rbac.authorization.k8s.io' }],
  })
  return out
}

const POLICY = policy()
const CLUSTER_ROLE_BINDINGS = POLICY.filter((p) => p.object.kind === 'ClusterRoleBinding').length

/** One RBAC decision alone, over the same policy in an index: its median time in microseconds. */
async function decisionMicros(): Promise<number> {
  const authorizer = rbacAuthorizer(new RbacRuleResolver(RbacIndex.of(POLICY.map((p) => p.object))))
  const attrs = {
    user: { username: 'bench', groups: ['dev', 'system:authenticated'] },
    verb: 'get',
    isResourceRequest: true,
    path: '/api/v1/namespaces/default/configmaps/settings',
    namespace: 'default',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'configmaps',
    subresource: '',
    name: 'settings',
  }
  const batches: number[] = []
  for (let b = 0; b < 50; b++) {
    const t0 = performance.now()
    for (let i = 0; i < 2000; i++) if ((await authorizer.authorize(attrs)).decision !== 'allow') throw new Error('the policy does not allow the GET')
    batches.push(((performance.now() - t0) * 1000) / 2000)
  }
  return median(batches.slice(10))
}

async function serverWith(modes: string[]): Promise<ApiServer> {
  const server = createApiServer({
    authorizationModes: modes,
    authentication: { tokens: [{ token: TOKEN, user: { username: 'bench', groups: ['dev'] } }] },
    embeddedIdentity: ADMIN_IDENTITY,
  })
  await server.ready
  for (const { path, object } of POLICY) await post(server, path, object)
  await post(server, 'http://in-process/api/v1/namespaces/default/configmaps', { metadata: { name: 'settings' }, data: { a: 'b' } })
  return server
}

async function get(server: ApiServer): Promise<boolean> {
  const res = await server.fetch(new Request(CONFIGMAP, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } }), {})
  await res.arrayBuffer()
  return res.status === 200
}

export async function measureAuthorization(): Promise<AuthorizationFigures> {
  const allow = await serverWith(['AlwaysAllow'])
  const rbac = await serverWith(['RBAC'])
  // The user's binding reaches the RBAC index through a watch: wait for it, then warm both up (unmeasured).
  for (let i = 0; !(await get(rbac)); i++) {
    if (i > 500) throw new Error('the RBAC server never allowed the GET')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  for (const server of [allow, rbac]) await runLoad({ total: 3000, concurrency: 1, maxSeconds: 10 }, () => get(server))
  const figures: AuthorizationFigures = { alwaysAllow: [], rbac: [], clusterRoleBindings: CLUSTER_ROLE_BINDINGS, decisionMicros: await decisionMicros(), loadAverage: 0 }
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the other server, so neither always runs on a freshly collected heap.
    const order = round % 2 === 0 ? (['alwaysAllow', 'rbac'] as const) : (['rbac', 'alwaysAllow'] as const)
    for (const which of order) figures[which].push(await runLoad(PER_ROUND, () => get(which === 'rbac' ? rbac : allow)))
  }
  await allow.shutdown()
  await rbac.shutdown()
  figures.loadAverage = loadavg()[0] ?? 0
  return figures
}

const BEGIN = '<!-- authorization-cost: begin -->'
const END = '<!-- authorization-cost: end -->'

const signed = (percent: number): string => `${percent >= 0 ? '+' : ''}${percent.toFixed(1)}%`

/** The median over rounds of a figure of each round. */
const over = (rounds: readonly LoadResult[], figure: (r: LoadResult) => number): number => median(rounds.map(figure))

export function renderAuthorizationSection(f: AuthorizationFigures, date: Date): string {
  const row = (what: string, r: readonly LoadResult[]) =>
    `| ${what} | ${Math.round(over(r, (x) => x.perSecond)).toLocaleString('en-US')}/s | ${ms(over(r, (x) => x.p50Ms))} | ${ms(over(r, (x) => x.p99Ms))} | ${r.reduce((n, x) => n + x.count, 0)} |`
  const cost = (over(f.rbac, (x) => x.p50Ms) / over(f.alwaysAllow, (x) => x.p50Ms) - 1) * 100
  const rateCost = (1 - over(f.rbac, (x) => x.perSecond) / over(f.alwaysAllow, (x) => x.perSecond)) * 100
  // Each round measured both servers back to back: how far apart two such measurements fall shows the noise.
  const perRound = f.rbac.map((r, i) => (r.p50Ms / (f.alwaysAllow[i]?.p50Ms ?? r.p50Ms) - 1) * 100)
  return `${BEGIN}
## Authorization cost per request (RBAC against AlwaysAllow)

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/authorization.ts\`.

One client GETs a ConfigMap with a bearer token from the static token file,
one request at a time, through \`server.fetch\` (in process, memory storage):
once on a server under \`AlwaysAllow\`, once under \`RBAC\` holding
${f.clusterRoleBindings} ClusterRoleBindings (shaped like upstream's default
policy: service accounts of controllers, and three bound to every
authenticated user) and the RoleBinding that grants the GET. ${ROUNDS} rounds
alternate between the two servers; the figures are medians over rounds. The
goal is under 5% on a GET.

| GET one ConfigMap | rate | p50 | p99 | n |
| --- | --- | --- | --- | --- |
${row('AlwaysAllow', f.alwaysAllow)}
${row('RBAC', f.rbac)}

Measured end to end, RBAC changes the p50 latency by **${signed(cost)}** and the
rate by ${signed(-rateCost)}; round by round the p50 difference ranged from
${signed(Math.min(...perRound))} to ${signed(Math.max(...perRound))} (load average ${f.loadAverage.toFixed(1)} on this shared machine), so the
end-to-end figure does not resolve a few percent here. The decision alone,
over the same policy held in an index, takes
**${f.decisionMicros.toFixed(1)} µs** (median), **${((f.decisionMicros / 1000 / over(f.alwaysAllow, (x) => x.p50Ms)) * 100).toFixed(1)}%** of the AlwaysAllow GET's p50: that
is the cost RBAC adds. A decision walks the cluster role bindings and the
namespace's role bindings in memory, as upstream's authorizer walks its
informer caches; it reads no storage.
${END}
`
}

/** Puts the section into docs/benchmarks.md in place of its previous version, or at the end. */
export async function writeAuthorizationSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureAuthorization()
  const section = renderAuthorizationSection(figures, new Date())
  await writeAuthorizationSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
