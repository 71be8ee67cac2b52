/**
 * The etcd client's own CPU per call: guarded creates (the daemon's Txn) and
 * reads (Range) against a local etcd, through the etcd3 package (which the daemon once used) and
 * through grpc-js directly with the hand-written messages of
 * runtimes/node/storage/etcd-wire.ts, in alternating rounds. This process's
 * CPU time per call is the figure (etcd runs in its own process).
 *
 *   node --import tsx test/bench/etcd-client-cost.ts [--rounds 3] [--calls 4000]
 */
import * as grpc from '@grpc/grpc-js'
import { Etcd3 } from 'etcd3'
import { parseArgs } from 'node:util'
import { EtcdClient } from '../../runtimes/node/storage/etcd-client.js'
import { decodeRangeResponse, decodeTxnResponse, encodeRangeRequest, encodeTxnRequest } from '../../runtimes/node/storage/etcd-wire.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, calls: { type: 'string', default: '4000' } } })
const rounds = Number(values.rounds)
const calls = Number(values.calls)
const concurrency = 64
const value = Buffer.alloc(1040, 'x')

type Call = (i: number) => Promise<unknown>

async function measure(call: Call): Promise<{ cpuUs: number; perSecond: number }> {
  let next = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) await call(next++)
    }),
  )
  const cpu = process.cpuUsage(cpu0)
  return { cpuUs: (cpu.user + cpu.system) / calls, perSecond: calls / ((performance.now() - t0) / 1000) }
}

function unary<T>(client: grpc.Client, path: string, bytes: Buffer, decode: (b: Buffer) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(path, (b: Buffer) => b, decode, bytes, new grpc.Metadata(), { deadline: Date.now() + 10000 }, (err, res) =>
      err ? reject(err) : resolve(res as T),
    )
  })
}

const etcd = await EtcdServer.start()
const client = new Etcd3({ hosts: etcd.clientUrl })
try {
  const pool = (client as unknown as { pool: { hosts: { getServiceClient(name: string): grpc.Client }[] } }).pool
  const kv = pool.hosts[0]!.getServiceClient('KV')
  const address = etcd.clientUrl.replace(/^https?:\/\//, '')
  const leanOptions = {
    'grpc.keepalive_time_ms': 30000,
    'grpc.keepalive_timeout_ms': 10000,
    'grpc.max_receive_message_length': -1,
    'grpc.enable_retries': 0,
    'grpc.enable_channelz': 0,
  }
  const store = new EtcdClient({ endpoints: [etcd.clientUrl] })
  const lean = new grpc.Client(address, grpc.credentials.createInsecure(), leanOptions)
  const key = (tag: string, r: number, i: number) => Buffer.from(`/registry/configmaps/default/${tag}-${r}-${i}`)
  const readKey = Buffer.from('/registry/configmaps/default/read')
  await client.put(readKey).value(value)
  const variants: Record<string, (r: number) => Call> = {
    'etcd3 txn': (r) => (i) => {
      const k = key('a', r, i)
      return client.kv.txn({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value } }],
        failure: [{ request_range: { key: k } }],
      })
    },
    'grpc-js txn': (r) => (i) => {
      const k = key('b', r, i)
      const bytes = encodeTxnRequest({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value } }],
        failure: [{ request_range: { key: k } }],
      })
      return unary(kv, '/etcdserverpb.KV/Txn', bytes, decodeTxnResponse)
    },
    'lean channel txn': (r) => (i) => {
      const k = key('c', r, i)
      const bytes = encodeTxnRequest({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value } }],
        failure: [{ request_range: { key: k } }],
      })
      return unary(lean, '/etcdserverpb.KV/Txn', bytes, decodeTxnResponse)
    },
    'store client txn': (r) => (i) => {
      const k = key('d', r, i)
      return store.txn({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value } }],
        failure: [{ request_range: { key: k } }],
      })
    },
    'etcd3 range': () => () => client.kv.range({ key: readKey }),
    'grpc-js range': () => () => unary(kv, '/etcdserverpb.KV/Range', encodeRangeRequest({ key: readKey }), decodeRangeResponse),
    'lean channel range': () => () => unary(lean, '/etcdserverpb.KV/Range', encodeRangeRequest({ key: readKey }), decodeRangeResponse),
    'store client range': () => () => store.range({ key: readKey }),
  }
  const results: Record<string, number[]> = {}
  for (let r = 0; r < rounds + 1; r++) {
    for (const [name, make] of Object.entries(variants)) {
      const m = await measure(make(r))
      if (r === 0) continue // warm-up
      ;(results[name] ??= []).push(m.cpuUs)
      console.log(`round ${r} ${name}: ${m.cpuUs.toFixed(0)} µs CPU per call, ${m.perSecond.toFixed(0)}/s`)
    }
  }
  for (const [name, list] of Object.entries(results)) {
    const sorted = [...list].sort((a, b) => a - b)
    console.log(`${name}: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} µs CPU per call`)
  }
  lean.close()
  store.close()
} finally {
  client.close()
  await etcd.destroy()
}
