/**
 * GETs of a small object while another client writes a large one: how long
 * the large write's steps keep the daemon's thread from the GETs. One
 * client merge-patches a ConfigMap of many keys (a label, a manager each
 * time), one write after another; another GETs a small ConfigMap, one
 * request after another, until the writes end. Given `--baseline <main.cjs>`
 * (the daemon built from an earlier commit), the same run measures it too,
 * taking turns. Run after `npm run build`:
 *
 *   node --import tsx test/bench/large-writes.ts [--keys 30000] [--baseline <main.cjs>]
 */
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { BIN, Daemon } from '../e2e/daemon.js'
import { ms, tableLines } from './format.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const BEGIN = '<!-- large-writes: begin -->'
const END = '<!-- large-writes: end -->'
const CM = '/api/v1/namespaces/default/configmaps'
const WRITES = 8
const ROUNDS = 2

interface Figures {
  writesMs: number[]
  getsMs: number[]
}

type Call = (method: string, path: string, body?: string, type?: string) => Promise<{ status: number; text: string }>

function clientOf(daemon: Daemon): Call {
  const config = parse(readFileSync(daemon.kubeconfig, 'utf8')) as {
    clusters: [{ cluster: { server: string; 'certificate-authority-data': string } }]
    users: [{ user: { 'client-certificate-data': string; 'client-key-data': string } }]
  }
  const pem = (data: string): Buffer => Buffer.from(data, 'base64')
  const { cluster } = config.clusters[0]
  const { user } = config.users[0]
  const agent = new Agent({ keepAlive: true, ca: pem(cluster['certificate-authority-data']), cert: pem(user['client-certificate-data']), key: pem(user['client-key-data']) })
  return (method, path, body, type = 'application/json') =>
    new Promise((resolve, reject) => {
      const req = request(new URL(path, cluster.server), { method, agent, headers: body ? { 'content-type': type } : {} }, (res) => {
        let text = ''
        res.on('data', (d) => (text += String(d)))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      })
      req.on('error', reject)
      req.end(body)
    })
}

async function measure(bin: string, keys: number): Promise<Figures> {
  const daemon = await Daemon.start([], { command: [process.execPath, bin] })
  try {
    const call = clientOf(daemon)
    const data = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'v']))
    const created = await call('POST', CM, JSON.stringify({ metadata: { name: 'large' }, data }))
    if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text.slice(0, 200)}`)
    await call('POST', CM, JSON.stringify({ metadata: { name: 'small' } }))
    // Warm-up: the GET's code compiled, and one large write's.
    for (let i = 0; i < 300; i++) await call('GET', `${CM}/small`)
    await call('PATCH', `${CM}/large?fieldManager=warm`, JSON.stringify({ metadata: { labels: { warm: 'yes' } } }), 'application/merge-patch+json')
    const writesMs: number[] = []
    const getsMs: number[] = []
    let writing = true
    const writer = (async () => {
      for (let i = 0; i < WRITES; i++) {
        const started = performance.now()
        const patch = JSON.stringify({ metadata: { labels: { n: String(i) } } })
        const answer = await call('PATCH', `${CM}/large?fieldManager=writer-${i % 2}`, patch, 'application/merge-patch+json')
        if (answer.status !== 200) throw new Error(`patch: ${answer.status} ${answer.text.slice(0, 200)}`)
        writesMs.push(performance.now() - started)
      }
    })().finally(() => (writing = false))
    while (writing) {
      const started = performance.now()
      await call('GET', `${CM}/small`)
      getsMs.push(performance.now() - started)
    }
    await writer
    return { writesMs, getsMs }
  } finally {
    await daemon.stop()
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
}

function row(label: string, rounds: Figures[]): string[] {
  const gets = rounds.flatMap((r) => r.getsMs).sort((a, b) => a - b)
  const writes = rounds.flatMap((r) => r.writesMs).sort((a, b) => a - b)
  return [label, ms(percentile(writes, 0.5)), String(gets.length), ms(percentile(gets, 0.5)), ms(percentile(gets, 0.99)), ms(gets[gets.length - 1] ?? NaN)]
}

const { values } = parseArgs({ options: { keys: { type: 'string', default: '30000' }, baseline: { type: 'string' } } })
const keys = Number(values.keys)
const targets: Array<{ label: string; bin: string }> = [{ label: 'this build', bin: BIN }]
if (values.baseline) targets.push({ label: 'the baseline', bin: values.baseline })
const results = new Map<string, Figures[]>(targets.map((t) => [t.label, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
    results.get(target.label)!.push(await measure(target.bin, keys))
    process.stderr.write(`round ${round + 1}: ${target.label} measured\n`)
  }
}
const table = tableLines(
  ['daemon', 'large write, p50', 'GETs while writing', 'GET p50', 'GET p99', 'GET max'],
  targets.map((t) => row(t.label, results.get(t.label)!)),
)
const section = `${BEGIN}
## GETs beside writes of a large object

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/large-writes.ts --keys ${keys}${values.baseline ? ' --baseline <earlier build>' : ''}\` (after \`npm run build\`).

The daemon on its embedded store, over TLS with the admin's client certificate. One client
merge-patches a ConfigMap of ${keys.toLocaleString('en')} keys ${WRITES} times, one write after another (a label, under
one of two managers); another GETs a small ConfigMap, one request after the other, until the writes
end. ${ROUNDS} rounds, taking turns; the figures are all rounds' together. A GET that arrives during a
write waits for the step of the write under way: the GET's figures show the longest such step.
Since 2026-11-28 a write of an object of more than 5,000 values lets other requests in between its
steps (docs/api.md): GETs then wait for a step, not a write, so more of them are answered while
writing and each of those waits a little. Later that day the store came to make the object it
keeps ready before the write (each pass a step of its own for a large value), and then the passes
every write makes (the copy in Go's order, the comparison behind managed fields, writing FieldsV1)
came to checkpoint within themselves: the baseline of this run is the build before that last change.
The longest steps left are single passes (docs/api.md): the store's protobuf encode and decode, the
patch's merge, validation, the answer's encoding. A GET crosses a few turns of the event loop
(reading, authentication, the handler), and a step may run before each.

${table.join('\n')}
${END}
`
await replaceSection(join(import.meta.dirname, '..', '..'), BEGIN, END, section)
process.stdout.write(section)
process.exit(0)
