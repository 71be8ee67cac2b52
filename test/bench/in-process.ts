/**
 * The server as a function: start-up of fresh servers and request rates
 * through `server.fetch`, no network. Imports the built package (dist), the
 * same code the daemon runs, so the two sides differ only in transport.
 */
import { spawn } from 'node:child_process'
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from 'kube-apiserver-ts'
import { type LoadOptions, type LoadResult, runLoad } from './load.js'

export interface InProcessFigures {
  /** createApiServer() to the first answered request, per fresh server in this process, ms. */
  startupMs: number[]
  /** Fresh Node processes: spawn, import the package, create, first answer; and their RSS then. */
  freshProcesses: FreshProcess[]
  gets: LoadResult
  creates: LoadResult
}

/** Requests of each kind before the clock starts, and how many distinct ConfigMaps GETs cycle through. */
const WARM_UP = 2000
const GET_SET = 200

const CONFIGMAPS = 'http://in-process/api/v1/namespaces/default/configmaps'

function configMap(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value' } })
}

async function create(server: ApiServer, name: string): Promise<boolean> {
  const res = await server.fetch(new Request(CONFIGMAPS, { method: 'POST', headers: { 'content-type': 'application/json' }, body: configMap(name) }))
  await res.arrayBuffer()
  return res.status === 201
}

async function get(server: ApiServer, name: string): Promise<boolean> {
  const res = await server.fetch(new Request(`${CONFIGMAPS}/${name}`))
  await res.arrayBuffer()
  return res.status === 200
}

async function startupOnce(): Promise<number> {
  const t0 = performance.now()
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
  const res = await server.fetch(new Request(`${CONFIGMAPS}`))
  await res.arrayBuffer()
  const ms = performance.now() - t0
  if (res.status !== 200) throw new Error(`first request answered ${res.status}`)
  await server.shutdown()
  return ms
}

/** What an embedding test pays in a new process: Node start, module loading, then the same as startupOnce. */
const FRESH_PROCESS_SCRIPT = `
const { ADMIN_IDENTITY, createApiServer } = await import('kube-apiserver-ts')
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/default/configmaps'))
await res.arrayBuffer()
process.stdout.write(res.status + ' ' + process.memoryUsage().rss + '\\n')
process.exit(0)
`

export interface FreshProcess {
  ms: number
  rssMiB: number
}

function freshProcessOnce(cwd: string): Promise<FreshProcess> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, ['--input-type=module', '-e', FRESH_PROCESS_SCRIPT], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      // Stop the clock at the answer, not at process exit.
      const m = /^200 (\d+)\n/.exec(out)
      if (m) resolve({ ms: performance.now() - t0, rssMiB: Number(m[1]) / 2 ** 20 })
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`fresh process exited ${code} with ${JSON.stringify(out)}`)))
  })
}

export async function measureInProcess(opts: { startups: number; freshProcesses: number; load: LoadOptions; cwd: string }): Promise<InProcessFigures> {
  const startupMs: number[] = []
  for (let i = 0; i < opts.startups; i++) startupMs.push(await startupOnce())
  const freshProcesses: FreshProcess[] = []
  for (let i = 0; i < opts.freshProcesses; i++) freshProcesses.push(await freshProcessOnce(opts.cwd))

  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
  await server.ready
  // Warm-up, not measured: the objects GETs read, and enough calls of each kind for the JIT to settle.
  for (let i = 0; i < WARM_UP; i++) await create(server, `warm-${i}`)
  for (let i = 0; i < WARM_UP; i++) await get(server, `warm-${i % GET_SET}`)
  const gets = await runLoad(opts.load, (i) => get(server, `warm-${i % GET_SET}`))
  const creates = await runLoad(opts.load, (i) => create(server, `bench-${i}`))
  await server.shutdown()
  return { startupMs, freshProcesses, gets, creates }
}

