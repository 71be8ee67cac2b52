/**
 * GET latency as a user of the daemon sees it while hostile input arrives:
 * the built daemon over TLS on loopback, GETs from a client process of its
 * own (hostile-get-client.ts, one keep-alive connection, one GET at a time),
 * the fuzz suite's worst inputs sent back to back from this process on
 * another connection. Idle, then under attack, in rounds. Figures only.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { CRDS, fuzzResources } from '../fuzz/fuzz-server.js'
import { CONFIGMAPS, type FuzzRequest, THINGS, worstInputs } from '../fuzz/worst-inputs.js'
import { stopDaemon, timedStart } from './daemon.js'
import type { HostileFigures, HostileRound, SlowGets } from './hostile-input.js'
import { type LoadResult, median } from './load.js'

/** The daemon's certificates in its --cert-dir, as daemon.ts lays the run's directory out. */
export const certDirIn = (dir: string): string => join(dir, 'pki')

export async function adminAgent(dir: string): Promise<Agent> {
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(certDirIn(dir), f), 'utf8')))
  return new Agent({ keepAlive: true, maxSockets: 1, ca, cert, key })
}

/** One request; its status, or 0 when the connection failed (a server may close one whose body it refused). */
export function call(agent: Agent, port: number, req: FuzzRequest): Promise<number> {
  return new Promise((resolve) => {
    const r = request({ host: '127.0.0.1', port, method: req.method, path: req.path, agent, headers: req.headers }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
      res.once('error', () => resolve(res.statusCode ?? 0))
    })
    r.once('error', () => resolve(0))
    r.end(req.body)
  })
}

const json = { 'content-type': 'application/json' }

/** The fuzz suite's CRDs and seeds, created as on the in-process server. */
export async function seed(agent: Agent, port: number): Promise<void> {
  const { crds, seeds } = fuzzResources()
  for (const crd of crds) await call(agent, port, { method: 'POST', path: CRDS, headers: json, body: JSON.stringify(crd) })
  const deadline = Date.now() + 20_000
  while ((await call(agent, port, { method: 'GET', path: THINGS, headers: {} })) !== 200) {
    if (Date.now() > deadline) throw new Error('the fuzz resources were never served')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  for (const { collection, body } of seeds) {
    const status = await call(agent, port, { method: 'POST', path: collection, headers: json, body: JSON.stringify(body) })
    if (status !== 201) throw new Error(`seeding ${collection} answered ${status}`)
  }
}

/** Stops what a hostile-input run started, whichever of it did start: the admin agent, the GET client, the daemon, its directory. */
export async function tearDown(run: { agent?: Agent; client?: ChildProcess; daemon?: ChildProcess; dir: string }): Promise<void> {
  run.agent?.destroy()
  if (run.client && run.client.exitCode === null) {
    run.client.stdin?.end()
    run.client.kill('SIGTERM')
  }
  if (run.daemon) await stopDaemon(run.daemon)
  await rm(run.dir, { recursive: true, force: true })
}

/** One GET as the client saw it: when it was sent and its latency (ms), and on Linux how long the client itself waited for a core meanwhile. */
export type GetSample = [sentAt: number, latency: number, clientWaitedForCore?: number]

/** The GET client process: `run(total)` resolves with its LoadResult. */
export function startGetClient(port: number, dir: string): { child: ChildProcess; run(total: number, samples?: boolean): Promise<LoadResult & { samples?: GetSample[] }> } {
  const script = join(import.meta.dirname, 'hostile-get-client.ts')
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(port), certDirIn(dir), `${CONFIGMAPS}/seed-0`], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return {
    child,
    async run(total, samples = false) {
      child.stdin!.write(`${JSON.stringify({ total, maxSeconds: 30, samples })}\n`)
      const next = await lines.next()
      if (next.done) throw new Error('the GET client exited')
      return JSON.parse(next.value as string) as LoadResult
    },
  }
}

const withoutSamples = ({ samples: _samples, ...result }: LoadResult & { samples?: GetSample[] }): LoadResult => result

/**
 * The GETs under attack slower than twice the idle p99, and how many of them
 * waited for a core in the client for over half their time: on a machine of
 * two cores the client shares them with the server and the hostile sender.
 */
function slowGets(idle: LoadResult, underAttack: LoadResult & { samples?: GetSample[] }): SlowGets {
  const overMs = 2 * idle.p99Ms
  const slow = (underAttack.samples ?? []).filter(([, latency]) => latency > overMs)
  const known = slow.every((sample) => sample[2] !== undefined)
  return { overMs, count: slow.length, clientWaiting: known ? slow.filter(([, latency, waited]) => waited! > latency / 2).length : undefined }
}

/**
 * Ordinary requests to send back to back instead of the worst inputs: the
 * same measurement with a busy but well-behaved second client, to tell what
 * any second client costs the GETs on this machine from what hostile input does.
 */
export function ordinaryInputs(): Array<{ name: string; request: FuzzRequest }> {
  const json = { 'content-type': 'application/json' }
  const create = (data: Record<string, string>) => JSON.stringify({ metadata: { name: 'seed-0' }, data })
  return [
    { name: 'GET of a ConfigMap', request: { method: 'GET', path: `${CONFIGMAPS}/seed-0`, headers: {} } },
    { name: 'LIST of the ConfigMaps', request: { method: 'GET', path: CONFIGMAPS, headers: {} } },
    { name: 'create of a small ConfigMap that exists (409)', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: create({ a: 'b' }) } },
    { name: 'create of a 100 KB ConfigMap that exists (409)', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: create({ a: 'x'.repeat(100_000) }) } },
  ]
}

export async function measureHostileDaemon(
  main: string,
  opts: { rounds: number; gets: number; inputs?: Array<{ name: string; request: FuzzRequest }> },
): Promise<HostileFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-hostile-'))
  let daemon: ChildProcess | undefined
  let client: ChildProcess | undefined
  let agent: Agent | undefined
  try {
    const { running } = await timedStart(main, dir)
    daemon = running.child
    agent = await adminAgent(dir)
    await seed(agent, running.port)
    const gets = startGetClient(running.port, dir)
    client = gets.child
    const inputs = opts.inputs ?? worstInputs()
    const times = new Map<string, { status: number; ms: number[] }>(inputs.map(({ name }) => [name, { status: 0, ms: [] }]))
    // Warm-up, unmeasured: the JIT on both ends, every hostile path twice, then GETs alone again. After
    // a shorter one (one pass, no GETs after it) the first round's idle p99 was 2 to 4 times the others'.
    await gets.run(2000)
    for (let pass = 0; pass < 2; pass++) for (const { request: req } of inputs) await call(agent, running.port, req)
    await gets.run(2000)

    const rounds: HostileRound[] = []
    let sent = 0
    for (let round = 0; round < opts.rounds; round++) {
      const idle = await gets.run(opts.gets, true)
      let attacking = true
      const attacker = (async () => {
        while (attacking) {
          const { name, request: req } = inputs[sent++ % inputs.length]!
          const t0 = performance.now()
          const status = await call(agent!, running.port, req)
          const record = times.get(name)!
          record.status = status
          record.ms.push(performance.now() - t0)
        }
      })()
      const underAttack = await gets.run(opts.gets, true)
      attacking = false
      await attacker
      rounds.push({ idle: withoutSamples(idle), underAttack: withoutSamples(underAttack), slow: slowGets(idle, underAttack) })
    }
    return {
      rounds,
      inputs: inputs.map(({ name }) => {
        const record = times.get(name)!
        return { name, status: record.status, medianMs: median(record.ms), sent: record.ms.length }
      }),
    }
  } finally {
    await tearDown({ agent, client, daemon, dir })
  }
}
