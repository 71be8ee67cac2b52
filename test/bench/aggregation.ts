/**
 * The cost of API aggregation on a GET: one object of an extension API
 * server read through the daemon's aggregator (`/apis/<group>/<version>/…`
 * on the daemon, which authenticates and authorizes the caller, then proxies
 * over TLS with its front-proxy client certificate and X-Remote-* headers)
 * against the same GET sent straight to the extension server with that
 * client certificate and those headers. The daemon is built from dist, the
 * extension server is test/integration/extension-apiserver.ts, registered
 * as the aggregation integration test does (Service, Endpoints, APIService
 * with its caBundle, `--enable-aggregator-routing`). Both paths use keep-alive
 * HTTPS with the same number in flight and take turns in each round.
 * Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/aggregation.ts [--rounds N] [--seconds S]`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { Daemon, eventually } from '../e2e/daemon.js'
import { type ExtensionServer, startExtensionServer, WARDLE, WARDLE_GV } from '../integration/extension-apiserver.js'
import { percentile } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BEGIN = '<!-- aggregation-cost: begin -->'
const END = '<!-- aggregation-cost: end -->'
const TOKEN = 'bench-aggregation-token'
const CONCURRENCY = 16
const FLUNDER = `/apis/${WARDLE_GV}/namespaces/wardle/flunders/bench`
const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices'

interface Path {
  label: string
  port: number
  agent: Agent
  headers: Record<string, string>
}

interface Run {
  count: number
  errors: number
  seconds: number
  latencies: number[]
}

function call(path: Path, method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { ...path.headers }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const req = request({ host: '127.0.0.1', port: path.port, method, path: url, agent: path.agent, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.once('end', () => done({ status: res.statusCode ?? 0, text }))
      res.once('error', fail)
    })
    req.once('error', fail)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** GETs of the one object for `seconds`, CONCURRENCY in flight, every latency kept. */
async function load(path: Path, seconds: number): Promise<Run> {
  const latencies: number[] = []
  let errors = 0
  const start = performance.now()
  const deadline = start + seconds * 1000
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      const ok = await call(path, 'GET', FLUNDER).then(
        (r) => r.status === 200,
        () => false,
      )
      latencies.push(performance.now() - t0)
      if (!ok) errors++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { count: latencies.length, errors, seconds: (performance.now() - start) / 1000, latencies }
}

interface Summary {
  rate: number
  p50: number
  p99: number
  errors: number
  rounds: number[]
}

function summarize(runs: Run[]): Summary {
  const all = runs.flatMap((r) => r.latencies).sort((a, b) => a - b)
  return {
    rate: runs.reduce((s, r) => s + r.count, 0) / runs.reduce((s, r) => s + r.seconds, 0),
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    rounds: runs.map((r) => r.count / r.seconds),
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '4' } } })
  const rounds = Number(values.rounds)
  const seconds = Number(values.seconds)
  const loadBefore = loadavg()[0]!

  const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
  const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
  const ext: ExtensionServer = await startExtensionServer(proxyCA.certificate, ['front-proxy-client'])
  const dir = mkdtempSync(join(tmpdir(), 'bench-aggregation-'))
  const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
  let daemon: Daemon | undefined
  const agents: Agent[] = []
  try {
    daemon = await Daemon.start([
      `--token-auth-file=${file('tokens.csv', `${TOKEN},bench-admin,bench-admin,"system:masters"\n`)}`,
      `--proxy-client-cert-file=${file('proxy-client.crt', proxyClient.certificate)}`,
      `--proxy-client-key-file=${file('proxy-client.key', proxyClient.privateKey)}`,
      '--enable-aggregator-routing',
    ])
    const agent = (opts: ConstructorParameters<typeof Agent>[0]) => {
      const a = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ...opts })
      agents.push(a)
      return a
    }
    // The daemon's own serving certificate is not what is measured: both paths skip its check alike.
    const proxied: Path = {
      label: 'through the aggregator',
      port: daemon.port,
      agent: agent({ rejectUnauthorized: false }),
      headers: { authorization: `Bearer ${TOKEN}` },
    }
    const direct: Path = {
      label: 'direct to the extension server',
      port: ext.port,
      agent: agent({ rejectUnauthorized: false, cert: proxyClient.certificate, key: proxyClient.privateKey }),
      headers: { 'x-remote-user': 'bench-admin', 'x-remote-group': 'system:masters' },
    }

    const created = async (url: string, body: unknown) => {
      const r = await call(proxied, 'POST', url, body)
      if (r.status !== 201) throw new Error(`POST ${url}: ${r.status} ${r.text}`)
    }
    await created('/api/v1/namespaces', { metadata: { name: 'wardle' } })
    await created('/api/v1/namespaces/wardle/services', { metadata: { name: 'api' }, spec: { ports: [{ name: 'https', port: 443 }] } })
    await created('/api/v1/namespaces/wardle/endpoints', {
      metadata: { name: 'api' },
      subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }],
    })
    await created(APISERVICES, {
      metadata: { name: `v1alpha1.${WARDLE}` },
      spec: { group: WARDLE, version: 'v1alpha1', service: { namespace: 'wardle', name: 'api', port: 443 }, caBundle: ext.caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    })
    await eventually(async () => {
      const r = await call(proxied, 'POST', `/apis/${WARDLE_GV}/namespaces/wardle/flunders`, { apiVersion: WARDLE_GV, kind: 'Flunder', metadata: { name: 'bench' } })
      if (r.status !== 201) throw new Error(`the aggregated group did not answer: ${r.status} ${r.text}`)
    }, 30_000)
    for (const p of [proxied, direct]) {
      const r = await call(p, 'GET', FLUNDER)
      if (r.status !== 200) throw new Error(`${p.label}: GET ${FLUNDER}: ${r.status} ${r.text}`)
    }

    // A short warm-up of each path (connections, JIT), not counted.
    await load(direct, 1)
    await load(proxied, 1)
    const runs = new Map<Path, Run[]>([
      [direct, []],
      [proxied, []],
    ])
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [direct, proxied] : [proxied, direct]
      for (const p of order) {
        runs.get(p)!.push(await load(p, seconds))
        ext.seen.length = 0 // the extension server records every request: kept small between runs
      }
      process.stderr.write(`round ${round + 1}/${rounds}\n`)
    }
    const loadAfter = loadavg()[0]!
    const d = summarize(runs.get(direct)!)
    const p = summarize(runs.get(proxied)!)
    const ms = (n: number) => `${n.toFixed(2)} ms`
    const row = (label: string, s: Summary) =>
      `| ${label}${s.errors ? ` (${s.errors} errors)` : ''} | ${Math.round(s.rate).toLocaleString('en-US')}/s | ${ms(s.p50)} | ${ms(s.p99)} | ${s.rounds.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')} |`
    const section = `${BEGIN}
## API aggregation: a proxied GET against a direct one

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, load average
${loadBefore.toFixed(1)} at the start and ${loadAfter.toFixed(1)} at the end, in one run of
\`node --import tsx test/bench/aggregation.ts\`: ${rounds} rounds of ${seconds} s per path, the two paths taking turns
(which goes first alternates), after a 1 s warm-up of each.

The daemon (\`dist/runtimes/node/main.cjs\`) serves on loopback with a static token (\`--token-auth-file\`, group
system:masters), \`--enable-aggregator-routing\` and a front-proxy client certificate; the extension server of
the aggregation tests (\`test/integration/extension-apiserver.ts\`, a plain Node HTTPS server holding its objects in a
map, run in the bench's own process beside the client) is registered through a Service, its Endpoints and an APIService with its caBundle, and holds one Flunder.
A Node HTTPS client with keep-alive sends GETs of that Flunder, ${CONCURRENCY} in flight, bodies read in full:
through the aggregator (\`GET ${FLUNDER}\` on the daemon: bearer token, authorization,
then the proxy to the extension server over TLS with the client certificate and X-Remote-* headers), and directly to
the extension server with the same client certificate and headers. Client, daemon and extension server share
the same cores, so only the ratios mean anything; rates are totals over the rounds, latencies percentiles over
every request of the rounds.

| GET of one Flunder | rate | p50 | p99 | rate per round |
| --- | --- | --- | --- | --- |
${row(direct.label, d)}
${row(proxied.label, p)}

Through the aggregator, the GET rate is **${(p.rate / d.rate).toFixed(2)}×** the direct one, its p50 **${(p.p50 / d.p50).toFixed(2)}×**
and its p99 **${(p.p99 / d.p99).toFixed(2)}×** the direct ones. The proxied request is the daemon's whole request chain
(authentication, flow control, authorization) plus a second TLS hop and the extension server's own work, so the
extension server's cost is paid on both paths and the difference is the aggregator's.
${END}
`
    await replaceSection(ROOT, BEGIN, END, section)
    process.stdout.write(section)
  } finally {
    for (const a of agents) a.destroy()
    await daemon?.stop()
    await ext.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
