/**
 * Watch event delivery through the server: N clients watch one namespace's
 * ConfigMaps (`?watch=1`, streamed bodies read as they arrive), either from
 * the resourceVersion of a list as informers do (the watch cache serves
 * those) or without one (the watch cache hands those to the backend), then
 * ConfigMaps are created one at a time; for each, the time from the create's
 * acknowledgement (its 201 read in full) to the moment each watcher has the
 * event's line. The next write waits until every watcher had the previous
 * one, so the figures are delivery, not queueing behind earlier writes.
 *
 * In-process the server may hand the event to a watcher before the writer
 * has read its answer: such deliveries count as negative times.
 */
import type { ApiServer } from 'kube-apiserver-ts'
import { configMapBody } from './configmap-payload.js'
import { median, percentile } from './load.js'
import type { CountingStorage } from './storage-backends.js'

export interface WatchLatencyOptions {
  namespace: string
  watchers: number
  /** Watch from the resourceVersion of a list of the namespace (as informers do), or with none. */
  fromList: boolean
  /** Measured writes; fewer when `maxSeconds` runs out. */
  writes: number
  maxSeconds: number
}

export interface WatchLatency {
  watchers: number
  fromList: boolean
  /** Writes measured. */
  writes: number
  /** Over every (write, watcher) delivery, ms after the acknowledgement. */
  p50Ms: number
  p99Ms: number
  /** Per write, when the last watcher had it, ms after the acknowledgement. */
  allP50Ms: number
  allP99Ms: number
  /** The measured creates themselves, request to acknowledgement, ms: in-process the fan-out may happen inside them. */
  writeP50Ms: number
  /** Deliveries that did not come within the wait for one write. */
  missed: number
  /** Watches the backend was asked to open while these clients watched (the watch cache serves them from one). */
  backendWatches: number
}

/** How long one write waits for every watcher before it counts the rest as missed. */
const WAIT_PER_WRITE_MS = 10_000
/** Unmeasured writes first: every watch is established once all watchers had the first. */
const WARM_UP_WRITES = 3

interface InFlight {
  name: string
  arrivals: Float64Array
  pending: number
  allArrived: () => void
}

/** Reads one watch body line by line; hands each event's object name to `seen`. */
async function readNames(reader: ReadableStreamDefaultReader<Uint8Array>, seen: (name: string) => void): Promise<void> {
  const decoder = new TextDecoder()
  let partial = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      const lines = (partial + decoder.decode(value, { stream: true })).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        // The object's metadata.name is the first "name" of the line; no need to parse the whole event.
        const name = /"name":"([^"]+)"/.exec(line)?.[1]
        if (name) seen(name)
      }
    }
  } catch {
    // Cancelled at the end of the measurement.
  }
}

async function listResourceVersion(server: ApiServer, url: string): Promise<string> {
  const res = await server.fetch(new Request(url))
  const list = (await res.json()) as { metadata?: { resourceVersion?: string } }
  const rv = list.metadata?.resourceVersion
  if (res.status !== 200 || !rv) throw new Error(`listing ${url} answered ${res.status} without a resourceVersion`)
  return rv
}

export async function measureWatchLatency(server: ApiServer, storage: CountingStorage, opts: WatchLatencyOptions): Promise<WatchLatency> {
  const url = `http://in-process/api/v1/namespaces/${opts.namespace}/configmaps`
  const backendWatchesBefore = storage.watchesOpened
  let current: InFlight | undefined
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = []
  const reading: Promise<void>[] = []
  const watchUrl = opts.fromList ? `${url}?watch=1&resourceVersion=${await listResourceVersion(server, url)}` : `${url}?watch=1`
  for (let w = 0; w < opts.watchers; w++) {
    const res = await server.fetch(new Request(watchUrl))
    if (res.status !== 200 || !res.body) throw new Error(`watch ${w} answered ${res.status}: ${await res.text()}`)
    const reader = res.body.getReader()
    readers.push(reader)
    reading.push(
      readNames(reader, (name) => {
        const write = current
        if (!write || write.name !== name || !Number.isNaN(write.arrivals[w])) return
        write.arrivals[w] = performance.now()
        if (--write.pending === 0) write.allArrived()
      }),
    )
  }

  /** One create, then the wait for every watcher; resolves with the create's own time and each watcher's time after the acknowledgement. */
  const writeOnce = async (name: string): Promise<{ writeMs: number; arrivals: Float64Array }> => {
    let allArrived!: () => void
    const arrived = new Promise<void>((resolve) => (allArrived = resolve))
    const write: InFlight = { name, arrivals: new Float64Array(opts.watchers).fill(Number.NaN), pending: opts.watchers, allArrived }
    current = write
    const sent = performance.now()
    const res = await server.fetch(new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: configMapBody(name) }))
    await res.arrayBuffer()
    const ack = performance.now()
    if (res.status !== 201) throw new Error(`creating ${name} answered ${res.status}`)
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([arrived, new Promise((resolve) => (timer = setTimeout(resolve, WAIT_PER_WRITE_MS)))])
    clearTimeout(timer)
    current = undefined
    return { writeMs: ack - sent, arrivals: write.arrivals.map((t) => t - ack) }
  }

  try {
    for (let i = 0; i < WARM_UP_WRITES; i++) await writeOnce(`warm-${i}`)
    const deliveries: number[] = []
    const lastPerWrite: number[] = []
    const writeTimes: number[] = []
    let missed = 0
    let writes = 0
    const deadline = performance.now() + opts.maxSeconds * 1000
    while (writes < opts.writes && performance.now() < deadline) {
      const { writeMs, arrivals } = await writeOnce(`event-${writes++}`)
      writeTimes.push(writeMs)
      let last = Number.NEGATIVE_INFINITY
      for (const t of arrivals) {
        // A watcher that never had the event makes this write's "all had it" infinite.
        if (Number.isNaN(t)) missed++
        else deliveries.push(t)
        last = Math.max(last, Number.isNaN(t) ? Number.POSITIVE_INFINITY : t)
      }
      lastPerWrite.push(last)
    }
    deliveries.sort((a, b) => a - b)
    lastPerWrite.sort((a, b) => a - b)
    return {
      watchers: opts.watchers,
      fromList: opts.fromList,
      writes,
      p50Ms: percentile(deliveries, 50),
      p99Ms: percentile(deliveries, 99),
      allP50Ms: percentile(lastPerWrite, 50),
      allP99Ms: percentile(lastPerWrite, 99),
      writeP50Ms: median(writeTimes),
      missed,
      backendWatches: storage.watchesOpened - backendWatchesBefore,
    }
  } finally {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})))
    await Promise.all(reading)
  }
}
