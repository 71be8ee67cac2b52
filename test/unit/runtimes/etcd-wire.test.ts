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
import {
  decodeRangeResponse,
  decodeTxnResponse,
  encodeRangeRequest,
  encodeTxnRequest,
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
  it('encodes a guarded create, an update with a lease of 64 bits and a census as the library does', () => {
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
})
