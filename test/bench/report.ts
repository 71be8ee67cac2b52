/** docs/benchmarks.md from one run's figures: the machine, the date, a side-by-side table, how to run. */
import { cpus, release, totalmem } from 'node:os'
import type { DaemonFigures } from './daemon.js'
import type { InProcessFigures } from './in-process.js'
import { ms, rate, ratio } from './format.js'
import { median } from './load.js'
import type { StorageFigures, StorageSettings } from './storage.js'
import { renderStorageSection } from './storage-report.js'

export interface BenchSettings {
  startups: number
  freshProcesses: number
  inProcessLoad: { total: number; concurrency: number }
  daemonLoad: { total: number; concurrency: number }
  daemonWarmStarts: number
  storage: StorageSettings
}

export function machineLine(): string {
  const cores = cpus()
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, Node ${process.version}`
}

export function renderReport(
  inProc: InProcessFigures,
  daemon: DaemonFigures,
  storage: StorageFigures,
  settings: BenchSettings,
  date: Date,
  elapsedSeconds: number,
): string {
  const startup = median(inProc.startupMs)
  const fresh = median(inProc.freshProcesses.map((p) => p.ms))
  const freshRss = median(inProc.freshProcesses.map((p) => p.rssMiB))
  const warm = median(daemon.warmStarts.map((s) => s.readyMs))
  const warmRss = median(daemon.warmStarts.map((s) => s.rssMiB))
  const rows = [
    ['figure', 'in-process (`server.fetch`)', 'daemon (TLS on loopback)', 'ratio'],
    ['---', '---', '---', '---'],
    [
      '`createApiServer()` to first answer',
      `**${ms(startup)}** median of ${inProc.startupMs.length} fresh servers in one process (the first: ${ms(inProc.startupMs[0] ?? Number.NaN)})`,
      '—',
      '',
    ],
    [
      'process start to first answer',
      `${ms(fresh)}: \`node\` start, import, create, first response (median of ${inProc.freshProcesses.length})`,
      `${ms(warm)}: spawn to \`/readyz\` 200, certificates reused (median of ${daemon.warmStarts.length})`,
      `daemon ${ratio(warm, fresh)}`,
    ],
    ['first start, generating the CA and certificates and creating the store', '—', ms(daemon.firstStart.readyMs), ''],
    [
      'resident memory (RSS)',
      `${freshRss.toFixed(1)} MiB at the first answer`,
      `${warmRss.toFixed(1)} MiB at ready; ${daemon.rssAfterLoadMiB.toFixed(1)} MiB after the load`,
      `daemon ${ratio(warmRss, freshRss)}`,
    ],
    ['GET one ConfigMap', rate(inProc.gets), rate(daemon.gets), `in-process ${ratio(inProc.gets.perSecond, daemon.gets.perSecond)}`],
    ['create a ConfigMap', rate(inProc.creates), rate(daemon.creates), `in-process ${ratio(inProc.creates.perSecond, daemon.creates.perSecond)}`],
  ]
  const table = rows.map((r) => `| ${r.join(' | ')} |`).join('\n')
  return `# Benchmarks

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}.

Figures from one run of \`npm run bench\`; compare the columns of each table
of this run with each other, never with a figure from another day or machine
(docs/architecture.md). No figure is a pass/fail threshold. The goal for
in-process start-up is under 50 ms.

${table}

What each side does:

- **in-process**: \`createApiServer()\` from the built package (\`dist/\`, the
  code the daemon runs), in-memory storage, requests handed to
  \`server.fetch\` as \`Request\` objects, response bodies read in full.
  ${settings.inProcessLoad.total} requests per rate, ${settings.inProcessLoad.concurrency} in flight. \`ratio\`
  is how many times the daemon takes longer or more memory, or how many times
  more requests per second the in-process server answers.
- **daemon**: \`node dist/runtimes/node/main.cjs --secure-port 0 --bind-address
  127.0.0.1 --cert-dir <temp>/pki --data-dir <temp>/data\`: objects in the
  embedded store, the daemon's default storage, so its rates include the
  store's cost as well as the transport's (the storage section below has the
  embedded store's own share, in-process). Timed from spawn until \`/readyz\` answers 200
  over TLS with the admin client certificate it wrote; memory from
  \`/proc/<pid>/status\`. Rates from \`node:https\` with a keep-alive agent
  (HTTP/1.1, client certificate), ${settings.daemonLoad.total} requests per rate,
  ${settings.daemonLoad.concurrency} in flight. The client runs on the same cores as the server, so the
  daemon's rates are a lower bound.
- Both sides first make 2000 creates and 2000 GETs unmeasured (JIT warm-up);
  GETs then read one of 200 of those ConfigMaps, creates add new ones to
  \`default\`. Each rate is bounded in time as well as count; \`n\`
  is how many finished.

${renderStorageSection(storage, settings.storage)}
## How to run

\`\`\`sh
npm run bench        # = npm run build && node --import tsx test/bench/run.ts
\`\`\`

This run took ${elapsedSeconds.toFixed(0)} s (each measurement is capped, so the whole stays under about four
minutes) and rewrites this file. It needs \`etcd\` on PATH for the storage
section. The sources are in \`test/bench/\`: \`in-process.ts\`, \`daemon.ts\`,
\`storage.ts\` (with \`storage-backends.ts\`, \`watch-latency.ts\`,
\`configmap-payload.ts\`), \`load.ts\` (bounded concurrency), \`report.ts\` and
\`storage-report.ts\` (this page).

Two benches compare this checkout with an older one in one run:
\`node --import tsx test/bench/read-path.ts --baseline <an older built checkout>\`
compares the daemon's GET and LIST with an older build and a fixed-body TLS
server; \`node --import tsx test/bench/start.ts --baseline <an older
built checkout>\` compares start-up (the package's import and first answer in a
fresh process, the daemon's spawn to \`/readyz\`) the same way.
\`node --import tsx test/bench/daemon-suite.ts\` measures the daemon on the
embedded store and on etcd in the terms of the performance goals (wrk GETs,
creates and updates against etcd driven directly, watches of 100 and 1,000
clients, memory with 10,000 ConfigMaps) beside upstream's figures as ratios;
it installs Debian's \`wrk\` when missing and it runs as root, and leaves those
rows empty, saying why, otherwise.
`
}
