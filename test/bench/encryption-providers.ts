/**
 * What each encryption-at-rest provider costs on Secret creates and GETs:
 * identity, aescbc, aesgcm, secretbox and KMS v2 (the test plugin over gRPC
 * on a unix socket), side by side in one run, each an in-process server on
 * the memory store that stores bytes through the provider, as the daemon's
 * stores do. The providers take turns in rounds, so drift of the machine
 * hits them alike. Figures only: nothing passes or fails.
 *
 * Part of `npm run bench`; run alone with `node --import tsx test/bench/encryption-providers.ts`: it
 * rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { EncryptionConfiguration, EncryptionProvider } from '../../core/config/encryption.js'
import { EncryptionAtRest } from '../../core/encryption/encryption-at-rest.js'
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from '../../core/index.js'
import { MemoryStorage } from '../../core/storage/memory.js'
import { nodeKmsClients } from '../../runtimes/node/daemon/kms-clients.js'
import { startKmsPlugin, type TestKmsPlugin } from '../integration/kms-plugin.js'
import { ms } from './format.js'
import { combineLoads, type LoadResult, runLoad } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const SECRETS = 'http://in-process/api/v1/namespaces/default/secrets'
const ROUNDS = 3
const CREATES = { total: 600, concurrency: 1, maxSeconds: 10 }
const GETS = { total: 1500, concurrency: 1, maxSeconds: 10 }
/** Distinct Secrets the GETs cycle through. */
const GET_SET = 100

const PROVIDERS = ['identity', 'aescbc', 'aesgcm', 'secretbox', 'kms v2'] as const
type ProviderName = (typeof PROVIDERS)[number]

interface Row {
  creates: LoadResult
  gets: LoadResult
}
export type EncryptionFigures = Record<ProviderName, Row>

const key = (name: string) => [{ name, secret: new Uint8Array(32).fill(7) }]

function provider(name: ProviderName, plugin: TestKmsPlugin): EncryptionProvider {
  switch (name) {
    case 'identity':
      return { type: 'identity' }
    case 'kms v2':
      return { type: 'kms', apiVersion: 'v2', name: 'bench', endpoint: plugin.endpoint, socketPath: plugin.socketPath, timeoutMs: 10_000 }
    default:
      return { type: name, keys: key('k1') }
  }
}

function secret(name: string): string {
  const data = { username: Buffer.from('admin').toString('base64'), password: Buffer.from(`password-of-${name}`).toString('base64') }
  return JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data })
}

async function create(server: ApiServer, name: string): Promise<boolean> {
  const res = await server.fetch(new Request(SECRETS, { method: 'POST', headers: { 'content-type': 'application/json' }, body: secret(name) }))
  await res.arrayBuffer()
  return res.status === 201
}

async function get(server: ApiServer, name: string): Promise<boolean> {
  const res = await server.fetch(new Request(`${SECRETS}/${name}`))
  await res.arrayBuffer()
  return res.status === 200
}

interface Subject {
  server: ApiServer
  encryption: EncryptionAtRest
  created: number
}

async function subject(name: ProviderName, plugin: TestKmsPlugin): Promise<Subject> {
  const config: EncryptionConfiguration = { resources: [{ resources: [{ group: '', resource: 'secrets' }], providers: [provider(name, plugin)] }] }
  const encryption = new EncryptionAtRest(config, { kms: nodeKmsClients })
  const storage = new MemoryStorage({ transformerFor: (k) => encryption.forKey(k) })
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY }, { storage, valueTransformers: encryption })
  await server.ready
  // Warm-up, unmeasured: the Secrets GETs read, and enough calls of each kind for the JIT to settle.
  for (let i = 0; i < GET_SET; i++) if (!(await create(server, `warm-${i}`))) throw new Error(`${name}: creating a Secret failed`)
  await runLoad({ total: 1000, concurrency: 1, maxSeconds: 10 }, (i) => get(server, `warm-${i % GET_SET}`))
  return { server, encryption, created: 0 }
}

export async function measureEncryptionProviders(): Promise<EncryptionFigures> {
  const plugin = await startKmsPlugin()
  const subjects = new Map<ProviderName, Subject>()
  const runs = new Map<ProviderName, { creates: LoadResult[]; gets: LoadResult[] }>()
  try {
    for (const name of PROVIDERS) {
      subjects.set(name, await subject(name, plugin))
      runs.set(name, { creates: [], gets: [] })
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of PROVIDERS) {
        const s = subjects.get(name)!
        const r = runs.get(name)!
        r.creates.push(await runLoad(CREATES, () => create(s.server, `bench-${s.created++}`)))
        r.gets.push(await runLoad(GETS, (i) => get(s.server, `warm-${i % GET_SET}`)))
      }
    }
  } finally {
    for (const s of subjects.values()) {
      await s.server.shutdown()
      s.encryption.close()
    }
    await plugin.close()
  }
  const figures = {} as EncryptionFigures
  for (const name of PROVIDERS) figures[name] = { creates: combineLoads(runs.get(name)!.creates), gets: combineLoads(runs.get(name)!.gets) }
  return figures
}

const BEGIN = '<!-- encryption-providers: begin -->'
const END = '<!-- encryption-providers: end -->'

const times = (a: number, b: number): string => `${(a / b).toFixed(2)}×`
const perSecond = (r: LoadResult): string => `${Math.round(r.perSecond).toLocaleString('en-US')}/s`

export function renderEncryptionSection(f: EncryptionFigures, date: Date): string {
  const base = f.identity
  const row = (name: ProviderName) => {
    const { creates, gets } = f[name]
    return `| ${name} | ${ms(creates.p50Ms)} | ${perSecond(creates)} | ${times(creates.p50Ms, base.creates.p50Ms)} | ${ms(gets.p50Ms)} | ${perSecond(gets)} | ${times(gets.p50Ms, base.gets.p50Ms)} |`
  }
  return `${BEGIN}
## Encryption at rest: each provider on Secret creates and GETs

Measured ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/encryption-providers.ts\`.

One client creates Secrets and GETs them, one request at a time, through
\`server.fetch\` (in process), each provider on its own server whose memory
store keeps the provider's bytes, as the daemon's etcd and embedded stores
do. \`identity\` goes through the same codec and transformer stage without
encrypting: the ratios are the provider's own cost. KMS v2 talks gRPC to the
test plugin on a unix socket, which wraps the DEK seed once at start-up;
every write and every read then derives the value's key from the seed
(HKDF) and parses or builds the EncryptedObject, but neither calls the
plugin (the decrypted seed is cached). The providers take turns in ${ROUNDS}
rounds; each p50 is the median of the rounds' p50s. The machine is shared
(load average ${loadavg()[0]!.toFixed(1)} at the end): rates swing with it, the p50s
are the steadier figures.

| provider | create p50 | create rate | create p50 vs identity | GET p50 | GET rate | GET p50 vs identity |
| --- | --- | --- | --- | --- | --- | --- |
${PROVIDERS.map(row).join('\n')}
${END}
`
}

export async function writeEncryptionSection(root: string, section: string): Promise<void> {
  await replaceSection(root, BEGIN, END, section)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureEncryptionProviders()
  const section = renderEncryptionSection(figures, new Date())
  await writeEncryptionSection(join(import.meta.dirname, '..', '..'), section)
  process.stdout.write(section)
  process.exit(0)
}
