/**
 * Bodies of a million empty list items (about 3 MB, the body limit) in
 * built-in kinds, sent in process: how long each is in the server, and the
 * longest the serving thread went without running a 1 ms timer meanwhile
 * (the longest any other request would have waited). Given `--baseline
 * <dir>` (a checkout of an earlier commit, built with `npm run build`), its
 * server is measured too, taking turns in the same run. Figures only:
 * nothing passes or fails. Run after `npm run build`:
 *
 *   node --max-old-space-size=4096 --import tsx test/bench/long-lists.ts [--items 1000000] [--baseline <dir>] [--only <name part>]
 *
 * It rewrites its section of docs/benchmarks.md.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { ms, tableLines } from './format.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const BEGIN = '<!-- long-lists: begin -->'
const END = '<!-- long-lists: end -->'
const ROOT = join(import.meta.dirname, '..', '..')
const ROUNDS = 2

interface Case {
  name: string
  path: string
  body: (items: string) => string
}

const NS = '/api/v1/namespaces/default'
const ALL: Case[] = [
  { name: 'Pod: containers', path: `${NS}/pods`, body: (l) => `{"metadata":{"name":"p"},"spec":{"containers":[${l}]}}` },
  { name: 'Pod: one container\'s env', path: `${NS}/pods`, body: (l) => `{"metadata":{"name":"pe"},"spec":{"containers":[{"name":"a","image":"i","env":[${l}]}]}}` },
  { name: 'Pod: tolerations', path: `${NS}/pods`, body: (l) => `{"metadata":{"name":"pt"},"spec":{"containers":[{"name":"a","image":"i"}],"tolerations":[${l}]}}` },
  { name: 'Pod: host aliases', path: `${NS}/pods`, body: (l) => `{"metadata":{"name":"ph"},"spec":{"containers":[{"name":"a","image":"i"}],"hostAliases":[${l}]}}` },
  { name: 'Pod: volumes', path: `${NS}/pods`, body: (l) => `{"metadata":{"name":"pv"},"spec":{"containers":[{"name":"a","image":"i"}],"volumes":[${l}]}}` },
  {
    name: 'Deployment: template containers',
    path: '/apis/apps/v1/namespaces/default/deployments',
    body: (l) => `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[${l}]}}}}`,
  },
  { name: 'Service: ports', path: `${NS}/services`, body: (l) => `{"metadata":{"name":"s"},"spec":{"ports":[${l}]}}` },
  { name: 'Endpoints: addresses', path: `${NS}/endpoints`, body: (l) => `{"metadata":{"name":"e"},"subsets":[{"addresses":[${l}]}]}` },
  { name: 'Node: taints', path: '/api/v1/nodes', body: (l) => `{"metadata":{"name":"n"},"spec":{"taints":[${l}]}}` },
  { name: 'LimitRange: limits', path: `${NS}/limitranges`, body: (l) => `{"metadata":{"name":"lr"},"spec":{"limits":[${l}]}}` },
  { name: 'Role: rules', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles`, body: (l) => `{"metadata":{"name":"r"},"rules":[${l}]}` },
  {
    name: 'NetworkPolicy: ingress rules',
    path: '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies',
    body: (l) => `{"metadata":{"name":"np"},"spec":{"podSelector":{},"ingress":[${l}]}}`,
  },
  {
    name: 'ValidatingWebhookConfiguration: webhooks',
    path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    body: (l) => `{"metadata":{"name":"vw"},"webhooks":[${l}]}`,
  },
  { name: 'ConfigMap: owner references', path: `${NS}/configmaps`, body: (l) => `{"metadata":{"name":"or","ownerReferences":[${l}]}}` },
]

interface Fetcher {
  fetch(request: Request): Promise<Response>
}

interface Figure {
  status: number
  totalMs: number
  holdMs: number
}

/** A server of the given build, in process, as an embedder starts one, with the namespace the cases write in. */
async function serverOf(dir: string): Promise<Fetcher> {
  const core = (await import(pathToFileURL(join(dir, 'dist', 'core', 'index.js')).href)) as typeof import('../../core/index.js')
  const server = core.createApiServer({ embeddedIdentity: core.ADMIN_IDENTITY })
  await server.ready
  await server.fetch(new Request('http://in-process/api/v1/namespaces', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"metadata":{"name":"default"}}' }))
  return server
}

async function measure(server: Fetcher, path: string, body: string): Promise<Figure> {
  let hold = 0
  let last = performance.now()
  const ticker = setInterval(() => {
    const now = performance.now()
    hold = Math.max(hold, now - last)
    last = now
  }, 1)
  const started = performance.now()
  const answer = await server.fetch(new Request(`http://in-process${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
  await answer.arrayBuffer()
  const totalMs = performance.now() - started
  clearInterval(ticker)
  hold = Math.max(hold, performance.now() - last)
  return { status: answer.status, totalMs, holdMs: hold }
}

const { values } = parseArgs({ options: { items: { type: 'string', default: '1000000' }, baseline: { type: 'string' }, only: { type: 'string' } } })
const CASES = ALL.filter((c) => values.only === undefined || c.name.includes(values.only))
const items = Number(values.items)
const list = Array(items).fill('{}').join(',')
const builds = [{ label: 'this build', dir: ROOT }, ...(values.baseline ? [{ label: 'baseline', dir: values.baseline }] : [])]
const servers = await Promise.all(builds.map((b) => serverOf(b.dir)))
const figures = new Map<string, Figure[][]>()
for (let round = 0; round < ROUNDS; round++)
  for (const c of CASES) {
    const body = c.body(list)
    for (let b = 0; b < builds.length; b++) {
      // Each round a new name, so that nothing a round stored answers the next with 409.
      const figure = await measure(servers[b]!, c.path, body.replace('"name":"', `"name":"r${round}-`))
      const rows = figures.get(c.name) ?? builds.map(() => [])
      rows[b]!.push(figure)
      figures.set(c.name, rows)
      process.stderr.write(`${c.name} (${builds[b]!.label}): ${figure.status}, ${ms(figure.totalMs)}, longest hold ${ms(figure.holdMs)}\n`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

const holds = (f: Figure[]): string => f.map((x) => ms(x.holdMs)).join(' / ')
const header = ['body', 'answer', ...builds.flatMap((b) => [`longest hold, ${b.label}`, `in the server, ${b.label}`])]
const rows = CASES.map((c) => {
  const per = figures.get(c.name)!
  return [c.name, String(per[0]![0]!.status), ...per.flatMap((f) => [holds(f), f.map((x) => ms(x.totalMs)).join(' / ')])]
})
const section = `${BEGIN}
## Bodies of a million list items

\`node --max-old-space-size=4096 --import tsx test/bench/long-lists.ts${values.baseline ? ' --baseline <dir>' : ''}\` (after \`npm run build\`), ${new Date().toISOString().slice(0, 10)}, ${machineLine()}.

Each body holds ${items.toLocaleString('en-US')} empty items (\`{}\`) in one list of a built-in kind, sent in process; ${ROUNDS} rounds${builds.length > 1 ? ', the builds taking turns' : ''}. *Longest hold* is the longest the serving thread went without running a 1 ms timer while the request was in the server: what any other request would have waited at most. An answer of 500 is the store refusing an object too large for etcd's request limit, after every pass. *In the server* is the request's whole time, which steps make longer (the timer and any other work run between them).

${tableLines(header, rows).join('\n')}
${END}
`
// A run of some of the bodies (--only) prints its figures and leaves the page as it was.
if (values.only === undefined) await replaceSection(ROOT, BEGIN, END, section)
process.stdout.write(section)
process.exit(0)
