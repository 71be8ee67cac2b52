/**
 * What admission costs on a pod create: the same create, one at a time,
 * on a server running no admission plugin, on one running the spec's
 * default set, and on one running the default set with one mutating
 * webhook (HTTPS on loopback, trusted through its caBundle, adding a label).
 * Rounds alternate between the servers. Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/admission.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
// The built code (dist), as the daemon runs it: `npm run build` first.
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { nodeWebhookClient } from 'kube-apiserver-ts/node'
import { type AdmissionWebhookServer, patchAnswer, startAdmissionWebhook } from '../integration/admission-webhook-server.js'
import { ms } from './format.js'
import { type LoadResult, median, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const PODS = 'http://in-process/api/v1/namespaces/default/pods'
const ROUNDS = 4
const PER_ROUND = { total: 400, concurrency: 1, maxSeconds: 10 }

type Variant = 'none' | 'defaults' | 'webhook'
const VARIANTS: readonly Variant[] = ['none', 'defaults', 'webhook']

export type AdmissionFigures = Record<Variant, LoadResult[]> & { loadAverage: number }

async function request(server: ApiServer, url: string, method: string, body?: unknown): Promise<Response> {
  return server.fetch(new Request(url, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) }))
}

async function serverFor(variant: Variant, webhook: AdmissionWebhookServer): Promise<ApiServer> {
  const server = createApiServer(
    { embeddedIdentity: ADMIN_IDENTITY, ...(variant === 'none' ? { admission: { plugins: [] } } : {}) },
    variant === 'webhook' ? { webhookClient: nodeWebhookClient() } : {},
  )
  await server.ready
  if (variant === 'webhook') {
    const config = {
      metadata: { name: 'bench' },
      webhooks: [
        {
          name: 'label.bench.example.com',
          clientConfig: { url: `${webhook.base}/label`, caBundle: webhook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    }
    const res = await request(server, 'http://in-process/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', 'POST', config)
    if (res.status !== 201) throw new Error(`cannot configure the webhook: ${res.status}`)
    // The configuration reaches the plugin through a watch: wait until a create is labelled.
    for (let i = 0; ; i++) {
      const probe = await (await create(server, `probe-${i}`)).json()
      if ((probe as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.['bench'] === 'yes') break
      if (i > 200) throw new Error('the webhook never took effect')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  return server
}

let counter = 0
function create(server: ApiServer, name = `p${counter++}`): Promise<Response> {
  return request(server, PODS, 'POST', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } })
}

export async function measureAdmission(): Promise<AdmissionFigures> {
  const webhook = await startAdmissionWebhook()
  webhook.handlers.set('/label', (r) => patchAnswer(r, [{ op: 'add', path: '/metadata/labels', value: { bench: 'yes' } }]))
  const servers = {} as Record<Variant, ApiServer>
  for (const v of VARIANTS) servers[v] = await serverFor(v, webhook)
  const one = (v: Variant) => async () => (await create(servers[v])).status === 201
  for (const v of VARIANTS) await runLoad({ ...PER_ROUND, total: 100 }, one(v))
  const figures: AdmissionFigures = { none: [], defaults: [], webhook: [], loadAverage: 0 }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()
    for (const v of order) figures[v].push(await runLoad(PER_ROUND, one(v)))
  }
  for (const v of VARIANTS) await servers[v].shutdown()
  await webhook.close()
  figures.loadAverage = loadavg()[0] ?? 0
  return figures
}

const BEGIN = '<!-- admission-cost: begin -->'
const END = '<!-- admission-cost: end -->'
const over = (rounds: readonly LoadResult[], figure: (r: LoadResult) => number): number => median(rounds.map(figure))

export function renderAdmissionSection(f: AdmissionFigures, date: Date): string {
  const row = (what: string, r: readonly LoadResult[]) =>
    `| ${what} | ${Math.round(over(r, (x) => x.perSecond)).toLocaleString('en-US')}/s | ${ms(over(r, (x) => x.p50Ms))} | ${ms(over(r, (x) => x.p99Ms))} | ${r.reduce((n, x) => n + x.count, 0)} |`
  const p50 = (v: Variant) => over(f[v], (x) => x.p50Ms)
  return `${BEGIN}
## Admission cost on a pod create

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/admission.ts\`.

One client creates pods one at a time through \`server.fetch\` (in process,
memory storage) on three servers: no admission plugin, the spec's default set
(NamespaceLifecycle, LimitRanger, ServiceAccount with its token volume,
Priority, DefaultTolerationSeconds, PodSecurity, ResourceQuota, the policy and
webhook plugins with nothing configured, ...), and the default set with one
mutating webhook over HTTPS on loopback that adds a label. ${ROUNDS} rounds
alternate between the servers; the figures are medians over rounds.

| create one pod | rate | p50 | p99 | n |
| --- | --- | --- | --- | --- |
${row('no admission plugin', f.none)}
${row('the default set', f.defaults)}
${row('the default set and one webhook', f.webhook)}

The default set adds **${ms(p50('defaults') - p50('none'))}** to a pod create's p50
(${(p50('defaults') / p50('none')).toFixed(2)}×); the webhook's round trip adds
**${ms(p50('webhook') - p50('defaults'))}** more (load average ${f.loadAverage.toFixed(1)} on this shared machine).
${END}
`
}

export async function writeAdmissionSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = renderAdmissionSection(await measureAdmission(), new Date())
  await writeAdmissionSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
