/**
 * The hop a watch event makes on etcd before the daemon can fan it out:
 * etcd's watch stream, measured alone. The daemon's etcd client
 * (runtimes/node/storage/etcd-client.ts) opens one watch stream
 * on a prefix, as the daemon's etcd watch does (etcd-watch.ts), and creates
 * keys there one at a time with the daemon's create transaction; for each,
 * the time from the send to the transaction's answer (what the daemon's 201
 * waits for), to the watch response carrying it, and between the two. The
 * values are 1 KiB, about a stored ConfigMap.
 *
 *   node --import tsx test/bench/etcd-watch-hop.ts [--writes N] [--etcd URL (else a local etcd is started)]
 */
import { parseArgs } from 'node:util'
import { EtcdClient } from '../../runtimes/node/storage/etcd-client.js'
import { decodeWatchResponse, encodeWatchRequest } from '../../runtimes/node/storage/etcd-wire.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { percentile } from './load.js'

const { values } = parseArgs({ options: { writes: { type: 'string', default: '300' }, etcd: { type: 'string' } } })
const WARM_UP = 20

const etcd = values.etcd ? undefined : await EtcdServer.start()
const client = new EtcdClient({ endpoints: [values.etcd ?? etcd!.clientUrl] })
const prefix = `/etcd-watch-hop-${process.pid}/`
const value = Buffer.alloc(1024, 'x')
const ack: number[] = []
const event: number[] = []
const afterAck: number[] = []
try {
  let expect: { key: string; seen: (at: number) => void } | undefined
  const stream = client.watchStream({
    message: (bytes) => {
      const at = performance.now()
      for (const e of decodeWatchResponse(bytes).events) if (expect && e.kv.key.toString() === expect.key) expect.seen(at)
    },
    end: () => {},
  })
  const end = new TextEncoder().encode(prefix)
  end[end.length - 1]!++
  stream.send(encodeWatchRequest({ create_request: { key: Buffer.from(prefix), range_end: Buffer.from(end), prev_kv: true, progress_notify: true } }))
  // The stream is established once an event of it arrives.
  const total = Number(values.writes) + WARM_UP
  for (let i = 0; i < total; i++) {
    const key = `${prefix}k${i}`
    let timer: ReturnType<typeof setTimeout> | undefined
    const seen = new Promise<number>((resolve, reject) => {
      expect = { key, seen: resolve }
      timer = setTimeout(() => reject(new Error(`no watch event for ${key} within 10 s`)), 10_000)
    })
    const sent = performance.now()
    await client.txn({
      compare: [{ key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: Buffer.from(key), value } }],
      failure: [{ request_range: { key: Buffer.from(key) } }],
    })
    const acked = performance.now()
    const at = await seen
    clearTimeout(timer)
    if (i < WARM_UP) continue
    ack.push(acked - sent)
    event.push(at - sent)
    afterAck.push(at - acked)
  }
  stream.close()
} finally {
  client.close()
  await etcd?.destroy()
}

const ms = (v: number) => v.toFixed(2)
const row = (name: string, xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return `| ${name} | ${ms(percentile(sorted, 50))} ms | ${ms(percentile(sorted, 99))} ms |`
}
process.stdout.write(`etcd watch hop, ${ack.length} creates of 1 KiB one at a time\n\n| from | p50 | p99 |\n| --- | --- | --- |\n`)
process.stdout.write(`${row('send to the transaction\u2019s answer (the 201 waits for this)', ack)}\n`)
process.stdout.write(`${row('send to the watch event', event)}\n`)
process.stdout.write(`${row('the answer to the watch event (negative: the event came first)', afterAck)}\n`)
