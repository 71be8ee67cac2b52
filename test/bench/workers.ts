/**
 * `--workers 1` against `--workers 2` on one etcd: GET and create rates from
 * a keep-alive HTTPS client with 16 requests in flight (so 16 connections,
 * which the workers share out as they accept them). The client, etcd and
 * the workers share this machine's cores, so the ratio says what a second
 * worker gives here, not on a machine with cores to spare. Figures only:
 * nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/workers.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { Daemon } from '../e2e/daemon.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { join } from 'node:path'
import { clientOf } from './daemon-client.js'
import { ms } from './format.js'
import { type LoadResult, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const GETS = { total: 6000, concurrency: 16, maxSeconds: 15 }
const CREATES = { total: 2000, concurrency: 16, maxSeconds: 15 }
const WORKER_COUNTS = [1, 2] as const
/** After start-up: the workers' first lease writes and the controllers' start settle before measuring. */
const SETTLE_MS = 5000

interface Figures {
  workers: number
  gets: LoadResult
  creates: LoadResult
}

async function measureWith(etcd: EtcdServer, workers: number): Promise<Figures> {
  const daemon = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, `--workers=${workers}`])
  const client = clientOf(daemon)
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS))
    const tag = `workers-${workers}`
    await client.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `read-${tag}` }, data: { a: 'b' } })
    const gets = await runLoad(GETS, async () => (await client.call('GET', `/api/v1/namespaces/default/configmaps/read-${tag}`)).status === 200)
    const creates = await runLoad(
      CREATES,
      async (i) => (await client.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `w-${tag}-${i}` }, data: { i: String(i) } })).status === 201,
    )
    return { workers, gets, creates }
  } finally {
    client.close()
    await daemon.stop()
  }
}

export async function measureWorkers(): Promise<Figures[]> {
  const etcd = await EtcdServer.start()
  try {
    const figures: Figures[] = []
    for (const workers of WORKER_COUNTS) figures.push(await measureWith(etcd, workers))
    return figures
  } finally {
    await etcd.destroy()
  }
}

const BEGIN = '<!-- workers: begin -->'
const END = '<!-- workers: end -->'

/** One sentence on which way the ratio went, since it depends on the machine the run had. */
function verdict(one: Figures, two: Figures): string {
  const faster = [two.gets.perSecond > one.gets.perSecond, two.creates.perSecond > one.creates.perSecond]
  if (faster.every(Boolean)) return '\nThe second worker served more of both here.'
  if (!faster.some(Boolean))
    return '\nThe second worker served less of both here: with no core to spare, it only adds a process (with its own leases and its own caches fed by etcd) competing for the cores the first one, the client and etcd already fill.'
  return `\nThe second worker served more ${faster[0] ? 'GETs' : 'creates'} and fewer ${faster[0] ? 'creates' : 'GETs'} here.`
}

export function renderWorkersSection(figures: Figures[], date: Date): string {
  const [one, two] = figures as [Figures, Figures]
  const cell = (r: LoadResult) => `${Math.round(r.perSecond).toLocaleString('en-US')}/s (p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}${r.errors ? `, ${r.errors} errors` : ''})`
  const row = (what: string, pick: (f: Figures) => LoadResult) => `| ${what} | ${cell(pick(one))} | ${cell(pick(two))} | ${(pick(two).perSecond / pick(one).perSecond).toFixed(2)}× |`
  return `${BEGIN}
## One daemon on several cores: \`--workers\` 1 against 2 on etcd

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/workers.ts\` (after \`npm run build\`).

One etcd member and the daemon (\`--etcd-servers\`, default flags) with
\`--workers=1\`, then \`--workers=2\`, on the same etcd; the client keeps
${GETS.concurrency} requests in flight over keep-alive HTTPS as the admin, so the
workers share its ${GETS.concurrency} connections. The client, etcd and the workers all
run on this machine's cores: the ratio is what a second worker gives when
nothing else has a core to spare, not what it gives on a larger machine.

| Requests | \`--workers=1\` | \`--workers=2\` | 2 / 1 |
| --- | --- | --- | --- |
${row('GET one ConfigMap', (f) => f.gets)}
${row('create a ConfigMap', (f) => f.creates)}
${verdict(one, two)}
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = renderWorkersSection(await measureWorkers(), new Date())
  await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
