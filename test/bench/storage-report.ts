/** The "Storage backends" section of docs/benchmarks.md: one table, a column per backend, and what each row measures. */
import { latency, ms, rate, ratio } from './format.js'
import type { LoadResult } from './load.js'
import { type BackendFigures, GET_SET, type ListFigures, type StorageFigures, type StorageSettings, WARM_UP } from './storage.js'
import type { WatchLatency } from './watch-latency.js'

type Pick = (b: BackendFigures) => LoadResult | undefined

function watchCell(w: WatchLatency | undefined): string {
  if (!w) return '—'
  const missed = w.missed ? `, **${w.missed} deliveries missed**` : ''
  return `**${ms(w.p50Ms)}** p50, p99 ${ms(w.p99Ms)}; all had it: p50 ${ms(w.allP50Ms)}; the create: ${ms(w.writeP50Ms)} (n=${w.writes}${missed})`
}

export function renderStorageSection(figures: StorageFigures, settings: StorageSettings): string {
  const backends = figures.backends
  const memory = backends.find((b) => b.name === 'memory')
  const etcd = backends.find((b) => b.name === 'etcd')
  const others = backends.filter((b) => b !== memory)

  /** Each other store's cost relative to memory: memory's rate over its rate, or its time over memory's. */
  const relative = (pick: Pick, kind: 'rate' | 'time'): string => {
    const base = memory && pick(memory)
    if (!base) return ''
    const parts = others.flatMap((b) => {
      const r = pick(b)
      if (!r) return []
      return [`${b.name} ${kind === 'rate' ? ratio(base.perSecond, r.perSecond) : ratio(r.p50Ms, base.p50Ms)}`]
    })
    return parts.length ? `vs memory: ${parts.join(', ')}` : ''
  }
  const cells = (show: (b: BackendFigures) => string): string[] => backends.map(show)
  const rateRow = (label: string, pick: Pick): string[] => [label, ...cells((b) => pickOr(pick(b), rate)), relative(pick, 'rate')]
  const timeRow = (label: string, pick: Pick): string[] => [label, ...cells((b) => pickOr(pick(b), latency)), relative(pick, 'time')]
  const serverCost = (label: string, store: Pick, server: Pick): string[] => [
    label,
    ...cells((b) => {
      const [s, v] = [store(b), server(b)]
      return s && v ? ratio(s.perSecond, v.perSecond) : '—'
    }),
    '',
  ]
  const list = (b: BackendFigures, objects: number): ListFigures | undefined => b.lists.find((l) => l.objects === objects)
  const watch = (b: BackendFigures, watchers: number, fromList: boolean): WatchLatency | undefined =>
    b.watches.find((w) => w.watchers === watchers && w.fromList === fromList)
  const watchRow = (label: string, watchers: number, fromList: boolean): string[] => [
    label,
    ...cells((b) => watchCell(watch(b, watchers, fromList))),
    `backend watches opened: ${backends.map((b) => `${b.name} ${watch(b, watchers, fromList)?.backendWatches ?? '—'}`).join(', ')}`,
  ]

  const raw = etcd?.rawPuts
  const rows: string[][] = [
    ['figure', ...backends.map((b) => b.name), 'ratios'],
    backends.map(() => '---').concat('---', '---'),
    rateRow('create, `Storage.create`', (b) => b.storageCreates),
    rateRow('create through the server (`POST`)', (b) => b.serverCreates),
    serverCost('↳ server\'s cost on creates: `Storage.create`/s ÷ server creates/s', (b) => b.storageCreates, (b) => b.serverCreates),
    [
      'etcd\'s own put (etcd3 client, no transaction, same bytes)',
      ...cells((b) => (b === etcd && raw ? rate(raw) : '—')),
      raw && etcd
        ? `**server over etcd raw put: ${ratio(raw.perSecond, etcd.serverCreates.perSecond)}**; \`Storage.create\` over raw put: ${ratio(raw.perSecond, etcd.storageCreates.perSecond)}`
        : '',
    ],
    rateRow('get, `Storage.get`', (b) => b.storageGets),
    rateRow('get through the server (`GET`)', (b) => b.serverGets),
    serverCost('↳ server\'s cost on gets: `Storage.get`/s ÷ server gets/s', (b) => b.storageGets, (b) => b.serverGets),
  ]
  for (const objects of settings.listSizes) {
    const n = objects.toLocaleString('en-US')
    rows.push(
      timeRow(`list ${n}, \`Storage.list\``, (b) => list(b, objects)?.storage),
      timeRow(`list ${n} through the server`, (b) => list(b, objects)?.server),
      timeRow(`list ${n} through the server, \`resourceVersion=0\``, (b) => list(b, objects)?.serverFromCache),
    )
  }
  for (const watchers of settings.watchers) rows.push(watchRow(`watch delivery, ${watchers} watcher${watchers === 1 ? '' : 's'} from a list's resourceVersion`, watchers, true))
  for (const watchers of settings.watchersWithoutResourceVersion)
    rows.push(watchRow(`watch delivery, ${watchers} watchers without resourceVersion`, watchers, false))
  const table = rows.map((r) => `| ${r.join(' | ')} |`).join('\n')
  const { load, lists, watchWrites } = settings

  return `## Storage backends

The same server over each storage backend, in one run: the in-memory store,
the embedded store (SQLite through libsql, a fresh temporary directory on this
machine's disk, \`synchronous=NORMAL\`) and etcd ${figures.etcdVersion} (one member on loopback
started for the run, its data on the same disk, reached over gRPC by the
etcd3 client). The server is \`createApiServer({}, { storage })\` from the
built package with its defaults: the watch cache is on. Every object is a
ConfigMap of ${figures.objectBytes.json} bytes as JSON; the embedded store and etcd keep it in the
protobuf envelope (${figures.objectBytes.stored} bytes), the daemon's default \`--storage-media-type\`;
the memory store keeps objects as they are.

${table}

What each row measures:

- **create / get, \`Storage\`**: the backend's \`Storage.create\` and
  \`Storage.get\` called directly (keys outside \`/registry\`, so no watch
  cache sees them), ${load.total} calls per rate, ${load.concurrency} in flight, each rate also
  capped at ${load.maxSeconds} s (\`n\` is how many finished). Gets cycle through ${GET_SET} objects.
  Each backend first makes ${WARM_UP} creates and ${WARM_UP} gets of each kind unmeasured.
- **through the server**: the same through \`server.fetch\` (\`POST\` and
  \`GET\` of \`/api/v1/namespaces/default/configmaps\`), bodies read in full:
  the request chain, decoding, validation, the namespace check (a
  \`Storage.get\` of the namespace for every create), encoding. The
  **server's cost** rows divide the store's rate by the server's, per backend.
- **etcd's own put**: \`client.put(key).value(bytes)\` with the etcd3 client on
  the same member: the stored bytes of one ConfigMap, no transaction, no
  codec, ${load.concurrency} in flight, like the creates. **Server over etcd raw put** is etcd's
  puts per second over the server's creates per second on it: how many raw
  puts one create through the server costs, its guarded transaction, the
  namespace read and the server's own work together.
- **lists**: a namespace filled with ${settings.listSizes.join(' and ')} ConfigMaps, listed one list at a
  time (${lists.total} lists each, capped at ${lists.maxSeconds} s): \`Storage.list\` on the backend; \`GET
  …/configmaps\` through the server without a resourceVersion, a consistent
  list that reads the backend; and with \`resourceVersion=0\`, answered from
  the watch cache. Response bodies are read in full, not parsed.
- **watch delivery**: that many clients watch one namespace's ConfigMaps
  through the server's watch endpoint, reading the streamed bodies; then
  ${watchWrites.total} ConfigMaps are created one at a time (capped at ${watchWrites.maxSeconds} s), each after every
  watcher had the previous one. A delivery is the time from the create's
  acknowledgement (its 201 read in full) to the moment a watcher has the
  event's line; p50 and p99 are over every write and watcher, "all had it"
  is when the last watcher had it (p50 over the writes), "the create" is the
  create's own time, request to acknowledgement (p50). A **negative** time means the watcher had
  the event before the writer had its answer: in-process there is no
  network, and the memory and embedded stores hand out the event inside the
  write, so the fan-out shows in how long the create took. Watchers that
  start from a list's resourceVersion, as informers do, are served by the
  watch cache: "backend watches opened" counts the watches the backend
  itself was asked for while they watched, 0 when the watch cache serves
  them all from its one watch per resource. A watch without a resourceVersion
  is handed to the backend, one backend watch per client (upstream serves
  those from the watch cache too unless the WatchFromStorageWithoutResourceVersion
  gate is on).
- Client and server share one process, and etcd runs on the same cores:
  compare the columns and the ratios of this run, not the absolute figures
  with another machine's.
`
}

function pickOr(r: LoadResult | undefined, show: (r: LoadResult) => string): string {
  return r ? show(r) : '—'
}
