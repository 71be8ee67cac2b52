/**
 * `npm run bench`: the in-process server and the daemon, then the server over
 * each storage backend (memory, the embedded store, etcd), measured side by
 * side in one run, written to docs/benchmarks.md. Needs `npm run build`
 * first (the daemon, the package self-reference and the stores run from
 * dist/) and `etcd` on PATH.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { measureAuthorization, renderAuthorizationSection, writeAuthorizationSection } from './authorization.js'
import { measureFlowControl, renderFlowControlSection, writeFlowControlSection } from './priority-and-fairness.js'
import { measureAdmission, renderAdmissionSection, writeAdmissionSection } from './admission.js'
import { measureDaemon } from './daemon.js'
import { measureEncryptionProviders, renderEncryptionSection, writeEncryptionSection } from './encryption-providers.js'
import { measureHostileInput, renderHostileSection, writeHostileSection } from './hostile-input.js'
import { measureInProcess } from './in-process.js'
import { measureTokenAuthentication, renderTokenSection, writeTokenSection } from './token-authentication.js'
import { type BenchSettings, machineLine, renderReport } from './report.js'
import { measureStorage } from './storage.js'

const ROOT = join(import.meta.dirname, '..', '..')
const DAEMON_MAIN = join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')

const settings: BenchSettings = {
  startups: 50,
  freshProcesses: 5,
  inProcessLoad: { total: 20000, concurrency: 16 },
  daemonLoad: { total: 8000, concurrency: 16 },
  daemonWarmStarts: 5,
  storage: {
    // Each rate capped at 8 s per backend: the three backends together stay within about two minutes.
    load: { total: 10000, concurrency: 16, maxSeconds: 8 },
    listSizes: [1000, 10000],
    lists: { total: 10, maxSeconds: 5 },
    watchers: [1, 100, 1000],
    watchersWithoutResourceVersion: [1000],
    watchWrites: { total: 50, maxSeconds: 10 },
  },
}
// Each rate stops after this long even when the count is not reached, keeping the whole run under ~4 minutes.
const MAX_SECONDS_PER_RATE = 20

if (!existsSync(DAEMON_MAIN)) {
  process.stderr.write(`${DAEMON_MAIN} is missing: run \`npm run build\` first (npm run bench does)\n`)
  process.exit(1)
}

const log = (text: string): void => void process.stderr.write(`${text}\n`)
const t0 = performance.now()
log(`machine: ${machineLine()}`)

log('in-process: start-up, fresh processes, GET and create rates …')
const inProc = await measureInProcess({
  startups: settings.startups,
  freshProcesses: settings.freshProcesses,
  load: { ...settings.inProcessLoad, maxSeconds: MAX_SECONDS_PER_RATE },
  cwd: ROOT,
})

log('daemon: first start, warm starts, GET and create rates over TLS …')
const daemon = await measureDaemon({
  main: DAEMON_MAIN,
  warmStarts: settings.daemonWarmStarts,
  load: { ...settings.daemonLoad, maxSeconds: MAX_SECONDS_PER_RATE },
})

log('storage backends: memory, the embedded store and etcd, through Storage and through the server …')
const storage = await measureStorage(settings.storage, log)

const report = renderReport(inProc, daemon, storage, settings, new Date(), (performance.now() - t0) / 1000)
await mkdir(join(ROOT, 'docs'), { recursive: true })
await writeFile(join(ROOT, 'docs', 'benchmarks.md'), report)
process.stdout.write(report)

log("GET latency while the fuzz suite's worst inputs are sent …")
const hostile = renderHostileSection(await measureHostileInput(), new Date())
await writeHostileSection(ROOT, hostile)
process.stdout.write(`\n${hostile}`)
log('GET with RBAC against AlwaysAllow …')
const authorization = renderAuthorizationSection(await measureAuthorization(), new Date())
await writeAuthorizationSection(ROOT, authorization)
process.stdout.write(`\n${authorization}`)
const flowControl = renderFlowControlSection(await measureFlowControl(), new Date())
await writeFlowControlSection(ROOT, flowControl)
process.stdout.write(`\n${flowControl}`)
const admission = renderAdmissionSection(await measureAdmission(), new Date())
await writeAdmissionSection(ROOT, admission)
process.stdout.write(`\n${admission}`)

log('bearer tokens on a GET: a static token, a cached JWT, first-use JWTs …')
const tokens = renderTokenSection(await measureTokenAuthentication(), new Date())
await writeTokenSection(ROOT, tokens)
process.stdout.write(`\n${tokens}`)
log('the read path: GET and LIST over TLS on the embedded store and etcd, against a fixed-body TLS server …')
// Its own process: it starts daemons and a limit server, and writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'read-path.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log("the daemon in the performance issue's terms: wrk and Node-client loads, creates against etcd itself, watches, memory …")
// Its own process: it starts daemons, etcd and a limit server, and writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'daemon-suite.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('API aggregation: a GET through the aggregator against the same GET sent to the extension server …')
// Its own process too: it starts a daemon and an extension server, and writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'aggregation.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('embedding: createApiServer() to the first answer, reset(), snapshot(), restore(), the activity log …')
// Fresh processes of its own; writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'embedding.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('a Deployment on 3 simulated nodes: created to available …')
// Fresh servers in a process of its own; writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'simulated-rollout.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('the published CRDs installed as a test harness does: creates, served, the first OpenAPI documents …')
// Fresh processes of its own; writes its section of docs/benchmarks.md (nothing when shared/ is not beside the checkout).
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'crd-install.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('--workers 1 against N on etcd and on the embedded store: GET, create, update (changed and not), delete …')
// Its own process: it starts etcd and daemons with their workers, and writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'workers.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log("a write's CPU step by step on each store, in process …")
// Its own process: it profiles itself while it writes, and writes its section of docs/benchmarks.md.
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'bench', 'write-steps.ts')], { stdio: ['ignore', 'inherit', 'inherit'] })
log('encryption at rest: each provider on Secret creates and GETs …')
const encryption = renderEncryptionSection(await measureEncryptionProviders(), new Date())
await writeEncryptionSection(ROOT, encryption)
process.stdout.write(`\n${encryption}`)
log(`wrote docs/benchmarks.md in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
