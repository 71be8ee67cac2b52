/**
 * Installing published CustomResourceDefinitions into a fresh server, as a
 * test harness does after start-up (envtest's CRDInstallOptions): the
 * experimental Gateway API CRDs and cert-manager's, from the releases in
 * `shared/reference/real-world/` beside the checkout, created one by one,
 * then discovery read until every served version lists its resource (as
 * envtest waits for them); then the first `/openapi/v2` (kubectl's and
 * other clients' schema) and `/openapi/v3` for `gateway.networking.k8s.io/v1`.
 * In process, a fresh process per round (the package from dist/, as a
 * consumer imports it), the builds taking turns with `--baseline`.
 *
 *   npm run build && node --import tsx test/bench/crd-install.ts [--rounds N] [--baseline DIR] [--no-write]
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { median } from './load.js'
import { packageEntry } from './package-entry.js'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')
const REAL_WORLD = join(ROOT, '..', 'shared', 'reference', 'real-world')
const SOURCES = [join(REAL_WORLD, 'gateway-api', 'config', 'crd', 'experimental'), join(REAL_WORLD, 'cert-manager', 'crds')]

interface Round {
  createMs: number
  servedMs: number
  openApiV2Ms: number
  openApiV3Ms: number
}

/** Every CustomResourceDefinition in the YAML files of the source folders. */
function definitions(): unknown[] {
  const crds: unknown[] = []
  for (const dir of SOURCES)
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort())
      for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
        const obj = doc.toJS() as { kind?: string } | null
        if (obj?.kind === 'CustomResourceDefinition') crds.push(obj)
      }
  return crds
}

/** One round in a fresh process: the server from `entry`, the definitions from stdin. */
const roundScript = (entry: string): string => `
const crds = JSON.parse(require('node:fs').readFileSync(0, 'utf8'))
;(async () => {
  const { ADMIN_IDENTITY, createApiServer } = await import(${JSON.stringify(entry)})
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
  await server.ready
  const call = (path, init) => server.fetch(new Request('http://in-process' + path, init))
  const t0 = performance.now()
  for (const crd of crds) {
    const res = await call('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(crd) })
    if (res.status !== 201) throw new Error(crd.metadata.name + ': ' + res.status + ' ' + (await res.text()).slice(0, 300))
  }
  const createMs = performance.now() - t0
  for (;;) {
    let missing = 0
    for (const crd of crds)
      for (const v of crd.spec.versions.filter((v) => v.served)) {
        const res = await call('/apis/' + crd.spec.group + '/' + v.name)
        const list = res.status === 200 ? await res.json() : { resources: [] }
        if (!list.resources.some((r) => r.name === crd.spec.names.plural)) missing++
      }
    if (missing === 0) break
    await new Promise((r) => setTimeout(r, 5))
  }
  const servedMs = performance.now() - t0
  let t = performance.now()
  await (await call('/openapi/v2')).arrayBuffer()
  const openApiV2Ms = performance.now() - t
  t = performance.now()
  await (await call('/openapi/v3')).arrayBuffer()
  await (await call('/openapi/v3/apis/gateway.networking.k8s.io/v1')).arrayBuffer()
  const openApiV3Ms = performance.now() - t
  await server.shutdown()
  process.stdout.write(JSON.stringify({ createMs, servedMs, openApiV2Ms, openApiV3Ms }))
  process.exit(0)
})()
`

function round(root: string, crds: string): Round {
  const out = execFileSync(process.execPath, ['-e', roundScript(packageEntry(root))], { input: crds, encoding: 'utf8', cwd: root })
  return JSON.parse(out) as Round
}

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, baseline: { type: 'string' }, 'no-write': { type: 'boolean', default: false } } })
if (!SOURCES.every((dir) => existsSync(dir))) {
  process.stderr.write(`the published CRDs are not beside the checkout (${REAL_WORLD}): the CRD install is not measured\n`)
  process.exit(0)
}
const crds = definitions()
const text = JSON.stringify(crds)
const builds: Array<[name: string, root: string]> = [['this build', ROOT]]
if (values.baseline) builds.push(['before', resolve(values.baseline)])
const figures = new Map<string, Round[]>(builds.map(([name]) => [name, []]))
// An unmeasured round each: the first process after a build writes the library's code cache.
for (const [, root] of builds) round(root, text)
for (let r = 0; r < Number(values.rounds); r++) {
  for (const [name, root] of r % 2 ? [...builds].reverse() : builds) figures.get(name)!.push(round(root, text))
  process.stderr.write(`round ${r + 1} of ${values.rounds}\n`)
}

const cell = (rounds: Round[], pick: (r: Round) => number): string => `${median(rounds.map(pick)).toFixed(0)} ms`
const mine = figures.get('this build')!
const before = figures.get('before')
const row = (label: string, pick: (r: Round) => number): string =>
  before
    ? `| ${label} | ${cell(mine, pick)} | ${cell(before, pick)} | ${(median(mine.map(pick)) / median(before.map(pick))).toFixed(2)}× |`
    : `| ${label} | ${cell(mine, pick)} |`
const BEGIN = '<!-- crd-install: begin -->'
const END = '<!-- crd-install: end -->'
const section = [
  BEGIN,
  '## Installing published CRDs, as a test harness does',
  '',
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'} (load average ${loadavg()[0]!.toFixed(1)} at the end), Node ${process.version}.`,
  `\`node --import tsx test/bench/crd-install.ts${before ? ' --baseline <the build before>' : ''}\`: ${values.rounds} rounds, a fresh process each${before ? ', the builds taking turns' : ''}; medians.`,
  `The ${crds.length} CustomResourceDefinitions of the experimental Gateway API and cert-manager releases users install`,
  '(`shared/reference/real-world/`) created one by one in a fresh in-process server, as envtest installs a suite\'s CRDs after',
  'start-up; then discovery read until every served version lists its resource (envtest\'s wait); then the first `/openapi/v2`',
  'and `/openapi/v3` with `gateway.networking.k8s.io/v1` (what kubectl and other clients read for schemas).',
  '',
  before ? '| figure (median) | this build | before | ratio |\n| --- | --- | --- | --- |' : '| figure (median) | this build |\n| --- | --- |',
  row('the creates', (r) => r.createMs),
  row('to every resource served in discovery', (r) => r.servedMs),
  row('the first `/openapi/v2`', (r) => r.openApiV2Ms),
  row('the first `/openapi/v3` index and `gateway.networking.k8s.io/v1`', (r) => r.openApiV3Ms),
  '',
  'Each create compiles and prices every CEL rule of the definition\'s schemas (upstream\'s create validation): the largest part of',
  'the creates\' time with the Gateway API\'s rules (about a third in a profile). Since 2026-11-26 the CRD controller\'s status writes no longer',
  'validate the spec again (upstream\'s status strategy checks the accepted names alone), its reconciles list the',
  'definitions without copying them, and the OpenAPI documents are hashed on 16-bit limbs and find each type\'s kinds by index.',
  END,
].join('\n')
process.stdout.write(`${section}\n`)
if (!values['no-write']) await replaceSection(ROOT, BEGIN, END, section)
