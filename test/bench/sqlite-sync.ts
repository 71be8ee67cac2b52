/**
 * Measures the embedded store's create rate with `synchronous=NORMAL` and
 * `synchronous=FULL` in one run, on the temp directory's disk (the numbers
 * behind the default in core/storage/sql/schema.ts):
 *
 *   node --import tsx test/bench/sqlite-sync.ts [creates per round]
 *
 * Rounds alternate between the two settings so that disk noise hits both.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Synchronous } from '../../core/storage/sql/schema.js'
import { openEmbeddedStore } from '../../runtimes/node/storage/sqlite.js'

const CREATES = Number(process.argv[2] ?? 2000)
const ROUNDS = 3
const root = mkdtempSync(join(tmpdir(), 'embedded-store-measure-'))

async function createsPerSecond(synchronous: Synchronous, round: number): Promise<number> {
  const store = await openEmbeddedStore({ dataDir: join(root, `${synchronous}-${round}`), synchronous })
  const padding = 'x'.repeat(400) // about 500 bytes stored per object, as a small ConfigMap
  const start = performance.now()
  for (let i = 0; i < CREATES; i++) {
    await store.create(`/registry/configmaps/default/cm-${i}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: 'default', uid: crypto.randomUUID() },
      data: { padding },
    })
  }
  const seconds = (performance.now() - start) / 1000
  await store.close()
  return CREATES / seconds
}

try {
  const rates: Record<Synchronous, number[]> = { NORMAL: [], FULL: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of ['NORMAL', 'FULL'] as const) rates[mode].push(await createsPerSecond(mode, round))
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  process.stdout.write(`${CREATES} sequential creates per round, ${ROUNDS} rounds, median creates/s:\n`)
  for (const mode of ['NORMAL', 'FULL'] as const) {
    process.stdout.write(`  synchronous=${mode}: ${Math.round(median(rates[mode]))} (rounds: ${rates[mode].map(Math.round).join(', ')})\n`)
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
