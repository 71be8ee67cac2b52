/**
 * The daemon on each runtime, side by side in one run: the Node daemon
 * (dist/), the single-file Bun binary and Deno's `deno run`, each timed from
 * spawn to `/readyz` 200 over TLS with the admin certificate it wrote, with
 * its resident memory then, and what each needs on disk. Run alone:
 *
 *   npm run build && node --import tsx test/bench/runtimes.ts
 *
 * It writes its section of docs/benchmarks.md.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type DaemonCommand, type DaemonStart, stopDaemon, timedStart } from './daemon.js'
import { replaceSection } from './section.js'

const exec = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const BEGIN = '<!-- bench:runtimes -->'
const END = '<!-- /bench:runtimes -->'
const WARM_STARTS = 5

interface RuntimeFigures {
  name: string
  how: string
  /** What has to be on disk to run it, MiB (binary, or runtime binary + what it loads). */
  sizeMiB: string
  /** The single-file binary's size, where there is one. */
  sizeBytes?: number
  first: DaemonStart
  warm: DaemonStart[]
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const mib = async (path: string): Promise<number> => (await stat(path)).size / 2 ** 20

/** A first start (certificates made, store created), then warm starts on the same directory. */
async function measure(command: DaemonCommand): Promise<Pick<RuntimeFigures, 'first' | 'warm'>> {
  const dir = await mkdtemp(join(tmpdir(), 'apiserver-bench-runtime-'))
  try {
    const first = await timedStart(command, dir)
    await stopDaemon(first.running.child)
    const warm: DaemonStart[] = []
    for (let i = 0; i < WARM_STARTS; i++) {
      const start = await timedStart(command, dir)
      warm.push(start.start)
      await stopDaemon(start.running.child)
    }
    return { first: first.start, warm }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function measureRuntimes(): Promise<RuntimeFigures[]> {
  const out = await mkdtemp(join(tmpdir(), 'apiserver-bench-bun-'))
  const binary = join(out, 'apiserver-bun')
  try {
    await exec(join(ROOT, 'node_modules', '.bin', 'bun'), ['build', '--compile', 'runtimes/bun/main.ts', '--outfile', binary], { cwd: ROOT })
    const deno = join(ROOT, 'node_modules', 'deno', 'deno')
    const denoArgs = ['run', '--sloppy-imports', '--node-modules-dir=manual', '--allow-read', '--allow-write', '--allow-net', '--allow-env', '--allow-sys']
    return [
      {
        name: 'Node',
        how: '`node dist/runtimes/node/main.cjs`',
        sizeMiB: `${(await mib(process.execPath)).toFixed(0)} (node) + the package and node_modules`,
        ...(await measure(join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs'))),
      },
      { name: 'Bun binary', how: '`./apiserver-bun` (`npm run build:bun`)', sizeMiB: `**${(await mib(binary)).toFixed(0)}**, the whole server`, sizeBytes: (await stat(binary)).size, ...(await measure([binary])) },
      {
        name: 'Deno',
        how: '`deno run ... runtimes/deno/main.ts`',
        sizeMiB: `${(await mib(deno)).toFixed(0)} (deno) + the sources and node_modules`,
        ...(await measure([deno, ...denoArgs, join(ROOT, 'runtimes', 'deno', 'main.ts')])),
      },
    ]
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

export function renderRuntimesSection(figures: RuntimeFigures[], when: Date, load: number): string {
  const bun = figures.find((f) => f.name === 'Bun binary')
  const bunSize = bun?.sizeBytes ? bun.sizeBytes / 2 ** 20 : Number.NaN
  const bunWarm = bun ? median(bun.warm.map((s) => s.readyMs)) : Number.NaN
  const row = (f: RuntimeFigures): string =>
    `| ${f.name}: ${f.how} | ${f.sizeMiB} | ${f.first.readyMs.toFixed(0)} ms | **${median(f.warm.map((s) => s.readyMs)).toFixed(0)} ms** | ${median(f.warm.map((s) => s.rssMiB)).toFixed(1)} MiB |`
  return `${BEGIN}
## The daemon on each runtime

Measured ${when.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM
(\`node --import tsx test/bench/runtimes.ts\`), with a load average of ${load.toFixed(1)} when it began:
other work on the machine slows every figure, and unevenly, so the rows compare only roughly. The same flags on each:
\`--secure-port 0 --bind-address 127.0.0.1 --cert-dir <temp>/pki --data-dir <temp>/data\`
(the embedded store). Ready is spawn to \`/readyz\` 200 over TLS with the admin client
certificate; a warm start reuses the certificates and the store (median of ${WARM_STARTS});
memory is VmRSS at ready. Goals: the binary under 120 MB (${bunSize < 120 * 10 ** 6 / 2 ** 20 ? 'met' : 'not met'}: ${bunSize.toFixed(0)} MiB);
ready within 300 ms of exec (${bunWarm <= 300 ? 'met' : 'not met'}: ${bunWarm.toFixed(0)} ms for a warm start; most of it passes
waiting for the server's \`ready\` (between "objects are stored in" and "Serving on" in the log), the same code on every runtime).

| runtime | on disk (MiB) | first start to ready | warm start to ready | RSS at ready |
| --- | --- | --- | --- | --- |
${figures.map(row).join('\n')}
${END}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const load = loadavg()[0] ?? 0
  const section = renderRuntimesSection(await measureRuntimes(), new Date(), load)
  await replaceSection(ROOT, BEGIN, END, section)
  process.stdout.write(section)
  process.exit(0)
}
