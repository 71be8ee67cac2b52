/**
 * The ceiling of creates and updates on etcd: etcd itself, driven directly
 * from this process with the daemon's own etcd client
 * (runtimes/node/storage/etcd-client.ts), sending the transactions the
 * daemon's etcd store sends:
 *
 * - create: "the key's create_revision is 0" then put, else range the key;
 * - update: a range of the key, then "its mod_revision is unchanged" then put,
 *   else range it (the daemon reads before every guarded update too).
 *
 * Values are the bytes the daemon stored for a ConfigMap, so sizes match.
 */
import { EtcdClient } from '../../runtimes/node/storage/etcd-client.js'
import { type LoadOptions, type LoadResult, runLoad } from './load.js'

export interface EtcdDirectFigures {
  creates: LoadResult
  updates: LoadResult
}

const key = (prefix: string, name: string) => Buffer.from(`${prefix}/${name}`)

async function create(client: EtcdClient, k: Buffer, value: Buffer): Promise<boolean> {
  const res = await client.txn({
    compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [{ request_put: { key: k, value } }],
    failure: [{ request_range: { key: k } }],
  })
  return res.succeeded
}

async function update(client: EtcdClient, k: Buffer, value: Buffer): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const read = await client.range({ key: k })
    const kv = read.kvs[0]
    if (!kv) return false
    const res = await client.txn({
      compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: kv.mod_revision }],
      success: [{ request_put: { key: k, value } }],
      failure: [{ request_range: { key: k } }],
    })
    if (res.succeeded) return true
  }
  return false
}

/**
 * Creates of new keys, then updates of `updateSet` keys in turn: the same
 * shapes of load as the daemon's creates and updates.
 */
export async function measureEtcdDirect(
  etcdUrl: string,
  value: Buffer,
  opts: { load: LoadOptions; updateSet: number; prefix: string },
): Promise<EtcdDirectFigures> {
  const client = new EtcdClient({ endpoints: [etcdUrl] })
  try {
    for (let i = 0; i < opts.updateSet; i++) await create(client, key(opts.prefix, `u-${i}`), value)
    const creates = await runLoad(opts.load, (i) => create(client, key(opts.prefix, `c-${i}`), value))
    const updates = await runLoad(opts.load, (i) => update(client, key(opts.prefix, `u-${i % opts.updateSet}`), value))
    return { creates, updates }
  } finally {
    client.close()
  }
}

/** The first value the daemon stored under `prefix` (to write values of the same size). */
export async function storedValue(etcdUrl: string, prefix: string): Promise<Buffer> {
  const client = new EtcdClient({ endpoints: [etcdUrl] })
  try {
    const start = Buffer.from(prefix)
    const end = Buffer.from(start)
    end[end.length - 1]! += 1
    const res = await client.range({ key: start, range_end: end, limit: 1 })
    const kv = res.kvs[0]
    if (!kv) throw new Error(`etcd has no key under ${prefix}`)
    return Buffer.from(kv.value)
  } finally {
    client.close()
  }
}
