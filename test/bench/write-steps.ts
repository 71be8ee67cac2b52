/**
 * Where a write's CPU goes, step by step: creates, updates (changing the
 * object, and changing nothing) and deletes of ConfigMaps, and a GET for
 * scale, through
 * `server.fetch` in this process, on the memory store, the embedded store
 * and etcd, under V8's sampling profiler. Each sample is charged to the
 * step of the nearest frame of the project or a package on its stack
 * (decoding the body, admission, validation and defaulting, managed fields,
 * the storage call, the watch caches' fan-out, encoding the answer, the
 * request's path through the filters and handlers), by the source file the
 * frame runs: the bench runs the TypeScript sources (under tsx), so the
 * files are the repository's. What the daemon adds (TLS, HTTP parsing and
 * writing) is not in process: the workers bench's CPU per request minus
 * these totals is its share. Figures only: nothing passes or fails.
 *
 *   node --import tsx test/bench/write-steps.ts
 *
 * Writes its section of docs/benchmarks.md (`npm run bench` runs it).
 */
import { Session } from 'node:inspector/promises'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_IDENTITY, type ApiServer, createApiServer, MemoryStorage, type Storage } from '../../core/index.js'
import { codecFor } from '../../core/storage/codec.js'
import { EtcdStorage } from '../../runtimes/node/storage/etcd.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')
const BEGIN = '<!-- write-steps: begin -->'
const END = '<!-- write-steps: end -->'
/** Requests of each kind before the profiler starts (the code warms up), then profiled. */
const WARM_UP = 1000
const PROFILED = 3000
const CONCURRENCY = 16
const SAMPLING_INTERVAL_US = 200
const OBJECTS = 64
const CONFIGMAPS = 'http://in-process/api/v1/namespaces/default/configmaps'

const STEPS = [
  'decode the body',
  'admission',
  'validation and defaulting',
  'managed fields',
  'storage call',
  'watch fan-out',
  'encode the answer',
  'filters and handlers',
  'garbage collection',
  'V8 and Node, unattributed',
  'the caller: its Request, reading the answer',
] as const
type Step = (typeof STEPS)[number]

/** The step a source file belongs to: the first rule whose pattern matches its path decides. */
const FILE_STEPS: ReadonlyArray<[RegExp, Step]> = [
  [/\/core\/(http\/(body|duplicate-fields|yaml-[^/]+|media-types)|machinery\/json-slices)\.ts$/, 'decode the body'],
  [/\/core\/admission\//, 'admission'],
  [/\/core\/(validation|resources|crd|cel)\/|\/core\/registry\/(field-validation|object-names)\.ts$/, 'validation and defaulting'],
  [/\/core\/apply\/|\/core\/registry\/managed-fields\.ts$/, 'managed fields'],
  [/\/core\/storage\/(cacher[^/]*|watch-[^/]+|store-watcher|memory-log)\.ts$/, 'watch fan-out'],
  // The stored form (protobuf, the value transformers) is the storage call's, not the answer's.
  [/\/core\/storage\/|\/core\/encoding\/protobuf|\/core\/encryption\/|\/runtimes\/node\/storage\/|node_modules\/(etcd3|@grpc|libsql|protobufjs)\//, 'storage call'],
  [/\/core\/encoding\/|\/core\/http\/(respond|observed-body|response-size)\.ts$/, 'encode the answer'],
  [/\/core\/|node_modules\/hono\//, 'filters and handlers'],
  [/\/test\/bench\//, 'the caller: its Request, reading the answer'],
]

type Kind = 'GET' | 'create' | 'update (changed)' | 'update (no change)' | 'delete'
/** A GET first, for scale: the issue's yardstick for an update that changes nothing. */
const KINDS: readonly Kind[] = ['GET', 'create', 'update (changed)', 'update (no change)', 'delete']
const BACKENDS = ['memory', 'embedded', 'etcd'] as const
type BackendName = (typeof BACKENDS)[number]

interface Breakdown {
  backend: BackendName
  kind: Kind
  /** CPU µs per request by step, and in all. */
  micros: Record<Step, number>
  total: number
}

interface ProfileNode {
  id: number
  callFrame: { url: string; functionName: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** CPU µs by step: each sample to the nearest frame with a step, idle samples left out. */
function stepsOf(profile: Profile): Record<Step, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stepOfNode = new Map<number, Step | null>()
  const resolve = (id: number): Step | null => {
    const known = stepOfNode.get(id)
    if (known !== undefined) return known
    const node = byId.get(id)!
    const name = node.callFrame.functionName
    let step: Step | null
    if (name === '(idle)' || name === '(program)' || name === '(root)') step = null
    else if (name === '(garbage collector)') step = 'garbage collection'
    else {
      const rule = FILE_STEPS.find(([pattern]) => pattern.test(node.callFrame.url))
      const up = parent.get(id)
      step = rule ? rule[1] : up === undefined ? 'V8 and Node, unattributed' : resolve(up)
    }
    stepOfNode.set(id, step)
    return step
  }
  const micros = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<Step, number>
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!
    if (node.callFrame.functionName === '(idle)') return
    const step = resolve(id) ?? 'V8 and Node, unattributed'
    micros[step] += profile.timeDeltas[i] ?? SAMPLING_INTERVAL_US
  })
  return micros
}

async function send(server: ApiServer, method: string, path: string, body?: unknown): Promise<number> {
  const init: RequestInit = body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
  const res = await server.fetch(new Request(`${CONFIGMAPS}${path}`, init))
  await res.arrayBuffer()
  return res.status
}

/** `total` requests of one kind, `CONCURRENCY` at a time; `offset` keeps names fresh across rounds. */
async function drive(server: ApiServer, kind: Kind, total: number, offset: number, stored: unknown[]): Promise<void> {
  let next = 0
  const one = async (i: number): Promise<void> => {
    const n = offset + i
    const status =
      kind === 'GET' ? await send(server, 'GET', `/obj-${n % OBJECTS}`)
      : kind === 'create' ? await send(server, 'POST', '', { metadata: { name: `new-${n}` }, data: { a: 'b' } })
      : kind === 'update (changed)' ? await send(server, 'PUT', `/obj-${n % OBJECTS}`, { metadata: { name: `obj-${n % OBJECTS}` }, data: { value: `v${n}` } })
      : kind === 'update (no change)' ? await send(server, 'PUT', `/obj-${n % OBJECTS}`, stored[n % OBJECTS])
      : await send(server, 'DELETE', `/new-${n}`)
    if (status >= 300) throw new Error(`${kind}: ${status}`)
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) await one(next++)
  }))
}

async function openStorage(name: BackendName): Promise<{ storage: Storage; close(): Promise<void> }> {
  const codec = codecFor('application/vnd.kubernetes.protobuf')
  if (name === 'memory') return { storage: new MemoryStorage(), close: async () => {} }
  if (name === 'embedded') {
    const dataDir = await mkdtemp(join(tmpdir(), 'apiserver-write-steps-'))
    const storage = await openEmbeddedStore({ dataDir, codec })
    return { storage, close: async () => void (await storage.close(), await rm(dataDir, { recursive: true, force: true })) }
  }
  const etcd = await EtcdServer.start()
  const storage = new EtcdStorage({ endpoints: [etcd.clientUrl], codec })
  return { storage, close: async () => void (await storage.close(), await etcd.destroy()) }
}

async function measureBackend(name: BackendName, session: Session): Promise<Breakdown[]> {
  const { storage, close } = await openStorage(name)
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY }, { storage })
  try {
    await server.ready
    for (let i = 0; i < OBJECTS; i++) await send(server, 'POST', '', { metadata: { name: `obj-${i}` }, data: { value: 'v' } })
    const results: Breakdown[] = []
    // Creates first: the deletes remove what they made.
    for (const kind of KINDS) {
      const stored: unknown[] = []
      if (kind === 'update (no change)') {
        for (let i = 0; i < OBJECTS; i++) {
          const res = await server.fetch(new Request(`${CONFIGMAPS}/obj-${i}`))
          stored.push(await res.json())
        }
      }
      await drive(server, kind, WARM_UP, 0, stored)
      await session.post('Profiler.start')
      await drive(server, kind, PROFILED, WARM_UP, stored)
      const { profile } = await session.post('Profiler.stop')
      const micros = stepsOf(profile as Profile)
      for (const step of STEPS) micros[step] /= PROFILED
      results.push({ backend: name, kind, micros, total: STEPS.reduce((sum, s) => sum + micros[s], 0) })
    }
    return results
  } finally {
    await server.shutdown()
    await close()
  }
}

/** An update that changes nothing against a GET (the yardstick: upstream compares and answers) and a changing one. */
function summary(results: Breakdown[]): string {
  const on = (backend: BackendName, kind: Kind) => results.find((r) => r.backend === backend && r.kind === kind)!.total
  return BACKENDS.map(
    (b) =>
      `On ${b === 'memory' ? 'the memory store' : b === 'embedded' ? 'the embedded store' : 'etcd'}, an update that changes nothing cost ${(on(b, 'update (no change)') / on(b, 'GET')).toFixed(2)}× a GET and ${(on(b, 'update (no change)') / on(b, 'update (changed)')).toFixed(2)}× a changing one; a changing update ${(on(b, 'update (changed)') / on(b, 'create')).toFixed(2)}× a create.`,
  ).join('\n')
}

function render(results: Breakdown[], date: Date): string {
  const us = (v: number) => Math.round(v).toLocaleString('en-US')
  const table = (backend: BackendName) => {
    const rows = results.filter((r) => r.backend === backend)
    return [
      `| step | ${rows.map((r) => r.kind).join(' | ')} |`,
      `| --- | ${rows.map(() => '---').join(' | ')} |`,
      ...STEPS.map((step) => `| ${step} | ${rows.map((r) => `${us(r.micros[step])} µs`).join(' | ')} |`),
      `| **in all** | ${rows.map((r) => `**${us(r.total)} µs**`).join(' | ')} |`,
    ].join('\n')
  }
  return `${BEGIN}
## A write's CPU, step by step

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/write-steps.ts\`.

ConfigMaps through \`server.fetch\` in one process, ${CONCURRENCY} requests at a time, as the admin, with default
options on each store: ${WARM_UP.toLocaleString('en-US')} requests of a kind to warm up, then ${PROFILED.toLocaleString('en-US')} under V8's sampling
profiler (every ${SAMPLING_INTERVAL_US} µs). Each sample is charged to the nearest frame on its stack that runs the
project's code or a package, by the file it is in (\`core/http/body.ts\` decodes, \`core/admission/\` admits,
\`core/resources/\` and \`core/validation/\` validate and default, \`core/apply/\` keeps managed fields, the watch
caches fan out, \`core/storage/\`, the protobuf codec and the etcd and SQLite clients make the storage call,
the rest of \`core/encoding/\` encodes the answer, the rest of \`core/\` and hono are the filters and handlers); Node's own work (Request and Response
objects, streams, promises) is charged to the code that asked for it, the bench's own (building each Request,
reading each answer) to the caller, and what V8 reports without a JavaScript frame (\`(program)\`) to V8 and Node. The sources run under tsx rather than
from the bundle. etcd's own CPU is not here (its own process); TLS and HTTP are not either: the daemon's
CPU per request in the workers section, less these totals, is what serving over HTTPS adds.
*Update (no change)* PUTs the object as it was read.

${BACKENDS.map((b) => `### ${b === 'memory' ? 'Memory store' : b === 'embedded' ? 'Embedded store' : 'etcd'}\n\n${table(b)}`).join('\n\n')}

${summary(results)}
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US })
  const results: Breakdown[] = []
  for (const backend of BACKENDS) {
    process.stderr.write(`write steps: ${backend} …\n`)
    results.push(...(await measureBackend(backend, session)))
  }
  const section = render(results, new Date())
  await replaceSection(ROOT, BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
