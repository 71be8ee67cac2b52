/**
 * The hand-written etcd messages (runtimes/node/storage/etcd-wire.ts) are
 * the bytes the generic protobuf library makes from etcd's own .proto files,
 * and its answers read back as that library reads them.
 */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import protobuf from 'protobufjs'
import { FrameReader } from '../../../runtimes/node/storage/etcd-member.js'
import {
  decodeHeaderOnly,
  decodeLeaseGrantResponse,
  decodeRangeResponse,
  decodeStatusResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeCompactionRequest,
  encodeLeaseGrantRequest,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchRequest,
  type TxnRequest,
} from '../../../runtimes/node/storage/etcd-wire.js'

const protoDir = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto')
const root = new protobuf.Root().loadSync(join(protoDir, 'rpc.proto'), { keepCase: true })
const type = (name: string) => root.lookupType(`etcdserverpb.${name}`)

const b = (s: string) => Buffer.from(s)
const value = Buffer.alloc(1040, 'v')

/** A request as the library reads it back, every default filled in (so a zero left out and a zero sent compare equal). */
function asLibraryReads(name: string, bytes: Uint8Array): unknown {
  const t = type(name)
  return t.toObject(t.decode(bytes), { longs: String, enums: String, bytes: String, defaults: true, oneofs: true })
}

/** The same request encoded by the library from its JSON spelling. */
function viaLibrary(name: string, message: object): Buffer {
  const t = type(name)
  return Buffer.from(t.encode(t.fromObject(message)).finish())
}

describe('etcd wire messages', () => {
  it('encodes a guarded create, an update with a lease of 64 bits, a census and a value compare as the library does', () => {
    const cases: TxnRequest[] = [
      {
        compare: [{ key: b('/registry/a'), target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: b('/registry/a'), value } }],
        failure: [{ request_range: { key: b('/registry/a') } }],
      },
      {
        compare: [{ key: b('/registry/a'), target: 'Mod', result: 'Equal', mod_revision: 2 ** 40 + 3 }],
        success: [{ request_put: { key: b('/registry/a'), value, lease: '7587852839521354756' } }],
        failure: [{ request_range: { key: b('/registry/a') } }],
      },
      {
        success: [
          { request_range: { key: b('/registry/'), range_end: b('/registry0'), count_only: true } },
          { request_range: { key: b('/registry/'), range_end: b('/registry0'), keys_only: true, sort_target: 'Mod', sort_order: 'Descend', limit: 1 } },
        ],
      },
      { compare: [{ key: b('/k'), target: 'Mod', result: 'Equal', mod_revision: 9 }], success: [{ request_delete_range: { key: b('/k') } }] },
      // A no-op update's check: the key unchanged since the guess, its stored bytes those the update would write.
      {
        compare: [
          { key: b('/registry/a'), target: 'Mod', result: 'Equal', mod_revision: 12 },
          { key: b('/registry/a'), target: 'Value', result: 'Equal', value },
        ],
        success: [{ request_range: { key: b('/registry/a'), keys_only: true } }],
        failure: [{ request_range: { key: b('/registry/a') } }],
      },
    ]
    for (const txn of cases) {
      // The library takes enum names and int64 text as etcd3 passes them.
      const spelled = JSON.parse(JSON.stringify(txn, (_k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data).toString('base64') : v)))
      assert.deepEqual(asLibraryReads('TxnRequest', encodeTxnRequest(txn)), asLibraryReads('TxnRequest', viaLibrary('TxnRequest', spelled)))
    }
  })

  it('encodes reads with a revision, a limit and a serializable flag as the library does', () => {
    const req = { key: b('/registry/pods/'), range_end: b('/registry/pods0'), limit: 500, revision: 12345678901, serializable: true }
    const spelled = { ...req, key: req.key.toString('base64'), range_end: req.range_end.toString('base64') }
    assert.deepEqual(asLibraryReads('RangeRequest', encodeRangeRequest(req)), asLibraryReads('RangeRequest', viaLibrary('RangeRequest', spelled)))
  })

  it('reads answers the library wrote: revisions, keys, values, counts, a failed guard with the current key', () => {
    const kv = { key: b('/registry/a'), value, create_revision: 5, mod_revision: 2 ** 40 + 7, version: 3, lease: '7587852839521354756' }
    const range = type('RangeResponse')
    const rangeBytes = range.encode(range.fromObject({ header: { revision: 2 ** 41, raft_term: 2 }, kvs: [kv], more: true, count: 42 })).finish()
    const decoded = decodeRangeResponse(rangeBytes)
    assert.equal(decoded.header.revision, 2 ** 41)
    assert.equal(decoded.more, true)
    assert.equal(decoded.count, 42)
    assert.equal(decoded.kvs[0]!.key.toString(), '/registry/a')
    assert.deepEqual(decoded.kvs[0]!.value, value)
    assert.equal(decoded.kvs[0]!.mod_revision, 2 ** 40 + 7)
    assert.equal(decoded.kvs[0]!.create_revision, 5)

    const txn = type('TxnResponse')
    const txnBytes = txn.encode(txn.fromObject({ header: { revision: 99 }, succeeded: false, responses: [{ response_range: { header: { revision: 99 }, kvs: [kv], count: 1 } }] })).finish()
    const failed = decodeTxnResponse(txnBytes)
    assert.equal(failed.succeeded, false)
    assert.equal(failed.header.revision, 99)
    assert.equal(failed.responses[0]!.response_range!.kvs[0]!.mod_revision, 2 ** 40 + 7)
    const ok = decodeTxnResponse(txn.encode(txn.fromObject({ header: { revision: 100 }, succeeded: true, responses: [{ response_put: { header: { revision: 100 } } }] })).finish())
    assert.equal(ok.succeeded, true)
    assert.equal(ok.responses[0]!.response_range, undefined)
  })
  it('encodes a watch from a revision, a progress request, a lease grant and a compaction as the library does', () => {
    const create = { key: b('/registry/pods/'), range_end: b('/registry/pods0'), start_revision: 2 ** 40 + 1, prev_kv: true, progress_notify: true }
    const spelled = { create_request: { ...create, key: create.key.toString('base64'), range_end: create.range_end.toString('base64') } }
    assert.deepEqual(
      asLibraryReads('WatchRequest', encodeWatchRequest({ create_request: create })),
      asLibraryReads('WatchRequest', viaLibrary('WatchRequest', spelled)),
    )
    // An empty progress request still selects its member of the oneof.
    const progress = asLibraryReads('WatchRequest', encodeWatchRequest({ progress_request: {} })) as { request_union?: string }
    assert.equal(progress.request_union, 'progress_request')
    assert.deepEqual(progress, asLibraryReads('WatchRequest', viaLibrary('WatchRequest', { progress_request: {} })))
    assert.deepEqual(asLibraryReads('LeaseGrantRequest', encodeLeaseGrantRequest(3660)), asLibraryReads('LeaseGrantRequest', viaLibrary('LeaseGrantRequest', { TTL: 3660 })))
    assert.deepEqual(
      asLibraryReads('CompactionRequest', encodeCompactionRequest(2 ** 35, true)),
      asLibraryReads('CompactionRequest', viaLibrary('CompactionRequest', { revision: 2 ** 35, physical: true })),
    )
  })

  it('reads watch responses the library wrote: creation, events with their previous values, progress, a compacted cancel', () => {
    const kv = { key: b('/registry/a'), value, create_revision: 5, mod_revision: 2 ** 40 + 7, version: 1 }
    const watch = type('WatchResponse')
    const write = (message: object) => watch.encode(watch.fromObject(message)).finish()
    const created = decodeWatchResponse(write({ header: { revision: 10 }, watch_id: 0, created: true }))
    assert.deepEqual([created.created, created.header.revision, created.events.length], [true, 10, 0])
    const events = decodeWatchResponse(
      write({
        header: { revision: 2 ** 40 + 8 },
        events: [
          { type: 'Put', kv },
          { type: 'Delete', kv: { key: b('/registry/b'), mod_revision: 2 ** 40 + 8 }, prev_kv: { ...kv, key: b('/registry/b'), version: 4 } },
        ],
      }),
    )
    assert.deepEqual(
      events.events.map((e) => [e.type, e.kv.key.toString(), e.kv.mod_revision, e.kv.version, e.prev_kv?.version]),
      [
        ['Put', '/registry/a', 2 ** 40 + 7, 1, undefined],
        ['Delete', '/registry/b', 2 ** 40 + 8, 0, 4],
      ],
    )
    assert.deepEqual(events.events[0]!.kv.value, value)
    // The answer to a progress request carries the watch ID -1 (all 64 bits set on the wire).
    assert.equal(decodeWatchResponse(write({ header: { revision: 12 }, watch_id: -1 })).watch_id, -1)
    const canceled = decodeWatchResponse(write({ header: { revision: 12 }, canceled: true, compact_revision: 9, cancel_reason: 'mvcc: required revision has been compacted' }))
    assert.deepEqual([canceled.canceled, canceled.compact_revision, canceled.cancel_reason], [true, 9, 'mvcc: required revision has been compacted'])
  })

  it('reads lease, status and compaction answers the library wrote, lease IDs of all 64 bits exactly', () => {
    const lease = type('LeaseGrantResponse')
    const granted = decodeLeaseGrantResponse(lease.encode(lease.fromObject({ header: { revision: 3 }, ID: '7587852839521354756', TTL: 3660 })).finish())
    assert.deepEqual(granted, { ID: '7587852839521354756', TTL: 3660, error: '' })
    const status = type('StatusResponse')
    const reported = decodeStatusResponse(status.encode(status.fromObject({ header: { revision: 3 }, version: '3.4.23', dbSize: 2 ** 33, leader: 1 })).finish())
    assert.deepEqual(reported, { header: { revision: 3 }, version: '3.4.23', dbSize: 2 ** 33 })
    const compaction = type('CompactionResponse')
    assert.equal(decodeHeaderOnly(compaction.encode(compaction.fromObject({ header: { revision: 77 } })).finish()).header.revision, 77)
  })

  it('reads the messages of a stream whatever its chunks: split headers, one message over many chunks, several in one', () => {
    const frame = (n: number, fill: string) => {
      const prefix = Buffer.alloc(5)
      prefix.writeUInt32BE(n, 1)
      return Buffer.concat([prefix, Buffer.alloc(n, fill)])
    }
    const stream = Buffer.concat([frame(3, 'a'), frame(70_000, 'b'), frame(0, ''), frame(2, 'c')])
    for (const size of [1, 2, 4, 5, 7, 16_384, stream.length]) {
      const reader = new FrameReader()
      const messages: string[] = []
      for (let at = 0; at < stream.length; at += size) {
        for (const m of reader.push(stream.subarray(at, at + size))) messages.push(`${m.length}${m.toString('latin1', 0, 1)}`)
      }
      assert.deepEqual(messages, ['3a', '70000b', '0', '2c'], `chunks of ${size} bytes`)
    }
    assert.throws(() => new FrameReader().push(Buffer.from([1, 0, 0, 0, 1, 0])), /compressed/)
  })
})
