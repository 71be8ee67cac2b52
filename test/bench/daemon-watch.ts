/**
 * Watch delivery through the daemon over TLS: N clients watch one
 * namespace's ConfigMaps from a list's resourceVersion (as informers do),
 * each on its own HTTP/1.1 connection, or as streams shared by a few HTTP/2
 * connections (as informers in one client-go process share one), then
 * ConfigMaps are created one at a time; for each, the time from the create's acknowledgement (its 201 read in full) to
 * the moment each watcher's connection has the event. The next create waits
 * until every watcher had the previous one (or a bounded wait ran out), so
 * the figures are delivery, not queueing behind earlier writes.
 */
import { Agent, request } from 'node:https'
import type { IncomingMessage } from 'node:http'
import { type ClientHttp2Session, connect } from 'node:http2'
import type { Readable } from 'node:stream'
import { configMapBody } from './configmap-payload.js'
import { percentile } from './load.js'
import { call, fetchText, TOKEN, type TlsTarget } from './tls-targets.js'

export interface WatchDelivery {
  watchers: number
  /** HTTP/2 connections the watches shared; 0: one HTTP/1.1 connection each. */
  http2Connections: number
  writes: number
  /** Over every (create, watcher) delivery, ms after the acknowledgement. */
  p50Ms: number
  p99Ms: number
  /** Per create, when the last watcher had it, ms after the acknowledgement. */
  allP99Ms: number
  /** Deliveries that did not come within the wait for one create. */
  missed: number
  /** Over every delivery, ms after the create was sent (the event may reach a watcher before the 201 does). */
  fromSendP50Ms: number
  fromSendP99Ms: number
  /** The measured creates themselves, send to 201, ms (a fan-out done before the 201 shows here). */
  createP50Ms: number
  createP99Ms: number
  /** The server's CPU time per (create, watcher) delivery, µs, when the options gave a way to read it. */
  cpuPerDeliveryUs?: number
}

const WAIT_PER_WRITE_MS = 10_000
const WARM_UP_WRITES = 3

/**
 * client-go's HTTP/2 flow-control windows (1 GiB for the connection, 4 MiB
 * per stream): with HTTP/2's default 64 KiB the connection's window would
 * hold one event for about fifty watchers, and the rest would wait for the
 * client's window updates.
 */
const H2_CONNECTION_WINDOW = 1 << 30
const H2_STREAM_WINDOW = 4 << 20

function openSession(port: number): Promise<ClientHttp2Session> {
  return new Promise((done, fail) => {
    const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, settings: { initialWindowSize: H2_STREAM_WINDOW } })
    session.once('error', fail)
    session.once('connect', () => {
      session.off('error', fail)
      session.on('error', () => {})
      session.setLocalWindowSize(H2_CONNECTION_WINDOW)
      done(session)
    })
  })
}

function openStream(session: ClientHttp2Session, path: string): Promise<Readable> {
  return new Promise((done, fail) => {
    const stream = session.request({ ':path': path, authorization: `Bearer ${TOKEN}` }, { endStream: true })
    stream.once('error', fail)
    stream.once('response', (headers) => {
      if (headers[':status'] !== 200) {
        stream.resume()
        fail(new Error(`watch answered ${headers[':status']}`))
      } else done(stream)
    })
  })
}

function openWatch(agent: Agent, port: number, path: string): Promise<IncomingMessage> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${TOKEN}` }, rejectUnauthorized: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        fail(new Error(`watch answered ${res.statusCode}`))
      } else done(res)
    })
    req.once('error', fail)
    req.end()
  })
}

export async function measureWatchDelivery(
  t: TlsTarget,
  opts: {
    namespace: string
    watchers: number
    writes: number
    maxSeconds: number
    prefix: string
    /** The server process's CPU time so far, ms. */
    cpuMs?: () => Promise<number>
    /** Watch as streams of this many HTTP/2 connections (as client-go multiplexes); absent, one HTTP/1.1 connection per watch. */
    http2Connections?: number
  },
): Promise<WatchDelivery> {
  const url = `/api/v1/namespaces/${opts.namespace}/configmaps`
  const list = JSON.parse(await fetchText(t.agent, t.port, `${url}?limit=1`)) as { metadata?: { resourceVersion?: string } }
  const rv = list.metadata?.resourceVersion
  if (!rv) throw new Error(`${t.label}: the list of ${url} has no resourceVersion`)
  // Every watch holds its own connection for its whole life, as separate informers would.
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
  const sessions: ClientHttp2Session[] = []
  const streams: Readable[] = []
  let current: { name: string; arrivals: Float64Array; pending: number; allArrived: () => void } | undefined
  try {
    for (let i = 0; i < (opts.http2Connections ?? 0); i++) sessions.push(await openSession(t.port))
    for (let w = 0; w < opts.watchers; w++) {
      const path = `${url}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`
      const res = sessions.length ? await openStream(sessions[w % sessions.length]!, path) : await openWatch(agent, t.port, path)
      streams.push(res)
      // The tail of the previous chunk, in case an event's name is split between two chunks.
      let tail = ''
      res.on('data', (chunk: Buffer) => {
        const text = tail + chunk.toString('latin1')
        tail = text.slice(-64)
        const write = current
        if (!write || !Number.isNaN(write.arrivals[w]) || !text.includes(`"${write.name}"`)) return
        write.arrivals[w] = performance.now()
        if (--write.pending === 0) write.allArrived()
      })
      res.on('error', () => {})
    }

    const fromSend: number[] = []
    const creates: number[] = []
    const writeOnce = async (name: string): Promise<Float64Array> => {
      let allArrived!: () => void
      const arrived = new Promise<void>((resolve) => (allArrived = resolve))
      const write = { name, arrivals: new Float64Array(opts.watchers).fill(Number.NaN), pending: opts.watchers, allArrived }
      current = write
      const sent = performance.now()
      const status = await call(t.agent, t.port, 'POST', url, configMapBody(name))
      const ack = performance.now()
      creates.push(ack - sent)
      if (status !== 201) throw new Error(`${t.label}: creating ${name} answered ${status}`)
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([arrived, new Promise((resolve) => (timer = setTimeout(resolve, WAIT_PER_WRITE_MS)))])
      clearTimeout(timer)
      current = undefined
      for (const at of write.arrivals) if (!Number.isNaN(at)) fromSend.push(at - sent)
      return write.arrivals.map((at) => at - ack)
    }

    for (let i = 0; i < WARM_UP_WRITES; i++) await writeOnce(`${opts.prefix}-warm-${i}`)
    fromSend.length = 0
    creates.length = 0
    const cpuBefore = await opts.cpuMs?.()
    const deliveries: number[] = []
    const lastPerWrite: number[] = []
    let missed = 0
    let writes = 0
    const deadline = performance.now() + opts.maxSeconds * 1000
    while (writes < opts.writes && performance.now() < deadline) {
      const arrivals = await writeOnce(`${opts.prefix}-${String(writes++).padStart(4, '0')}`)
      let last = Number.NEGATIVE_INFINITY
      for (const at of arrivals) {
        if (Number.isNaN(at)) missed++
        else deliveries.push(at)
        last = Math.max(last, Number.isNaN(at) ? Number.POSITIVE_INFINITY : at)
      }
      lastPerWrite.push(last)
    }
    const cpuAfter = await opts.cpuMs?.()
    deliveries.sort((a, b) => a - b)
    lastPerWrite.sort((a, b) => a - b)
    fromSend.sort((a, b) => a - b)
    creates.sort((a, b) => a - b)
    return {
      watchers: opts.watchers,
      http2Connections: opts.http2Connections ?? 0,
      writes,
      p50Ms: percentile(deliveries, 50),
      p99Ms: percentile(deliveries, 99),
      allP99Ms: percentile(lastPerWrite, 99),
      missed,
      fromSendP50Ms: percentile(fromSend, 50),
      fromSendP99Ms: percentile(fromSend, 99),
      createP50Ms: percentile(creates, 50),
      createP99Ms: percentile(creates, 99),
      ...(cpuBefore !== undefined && cpuAfter !== undefined && writes > 0
        ? { cpuPerDeliveryUs: ((cpuAfter - cpuBefore) * 1000) / (writes * opts.watchers) }
        : {}),
    }
  } finally {
    for (const s of streams) s.destroy()
    for (const s of sessions) s.destroy()
    agent.destroy()
  }
}
