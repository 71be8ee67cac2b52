/**
 * etcd's messages (rpc.proto, kv.proto) encoded and decoded by hand, for
 * the calls the store makes: Range and Txn on every read and write, Watch,
 * and the rarer LeaseGrant, Compact and Status. A generic client builds
 * each request from a description at run time and decodes every answer into
 * objects with every default filled in and every int64 as text; these
 * functions write the few fields set and read back numbers.
 * Field numbers are etcd's (they are part of its wire contract).
 */
import { LEN, Reader, VARINT } from '../../../core/encoding/protobuf/wire.js'

export interface RangeRequest {
  key: Uint8Array
  range_end?: Uint8Array
  limit?: number
  revision?: number
  sort_order?: 'None' | 'Ascend' | 'Descend'
  sort_target?: 'Key' | 'Version' | 'Create' | 'Mod' | 'Value'
  serializable?: boolean
  keys_only?: boolean
  count_only?: boolean
}

export interface PutRequest {
  key: Uint8Array
  value: Uint8Array
  /** A lease ID as etcd3 gives it: decimal text, since IDs use all 64 bits. */
  lease?: string
}

export interface DeleteRangeRequest {
  key: Uint8Array
  range_end?: Uint8Array
}

export type RequestOp = { request_range: RangeRequest } | { request_put: PutRequest } | { request_delete_range: DeleteRangeRequest }

export interface Compare {
  key: Uint8Array
  target: 'Version' | 'Create' | 'Mod' | 'Value'
  result: 'Equal' | 'Greater' | 'Less' | 'NotEqual'
  /** The number compared with, in the field the target names. */
  version?: number
  create_revision?: number
  mod_revision?: number
  /** The bytes compared with, for the `Value` target. */
  value?: Uint8Array
}

export interface TxnRequest {
  compare?: Compare[]
  success?: RequestOp[]
  failure?: RequestOp[]
}

export interface KeyValue {
  key: Buffer
  value: Buffer
  create_revision: number
  mod_revision: number
  version: number
}

export interface ResponseHeader {
  revision: number
}

export interface RangeResponse {
  header: ResponseHeader
  kvs: KeyValue[]
  more: boolean
  count: number
}

export interface ResponseOp {
  response_range?: RangeResponse
}

export interface TxnResponse {
  header: ResponseHeader
  succeeded: boolean
  responses: ResponseOp[]
}

const SORT_ORDER = { None: 0, Ascend: 1, Descend: 2 } as const
const SORT_TARGET = { Key: 0, Version: 1, Create: 2, Mod: 3, Value: 4 } as const
const COMPARE_RESULT = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const
const COMPARE_TARGET = { Version: 0, Create: 1, Mod: 2, Value: 3 } as const

// --- encoding ---------------------------------------------------------------
// Two passes: the size of every message first (so a nested message's length
// prefix is known), then one buffer of exactly that size, written once.

function varintSize(n: number): number {
  if (n < 0) return 10
  let size = 1
  while (n >= 0x80) {
    n = Math.floor(n / 0x80)
    size++
  }
  return size
}

/** A field of wire type LEN: tag byte(s), length, content. Every field number here is below 16: one tag byte. */
const lenField = (contentSize: number) => 1 + varintSize(contentSize) + contentSize
const numField = (field: number, n: number) => (n === 0 ? 0 : (field >= 16 ? 2 : 1) + varintSize(n))

class Out {
  private pos = 0
  readonly buf: Buffer
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size)
  }

  varint(n: number): void {
    const buf = this.buf
    if (n < 0) {
      let u = BigInt.asUintN(64, BigInt(n))
      while (u >= 0x80n) {
        buf[this.pos++] = Number(u & 0x7fn) | 0x80
        u >>= 7n
      }
      buf[this.pos++] = Number(u)
      return
    }
    while (n >= 0x80) {
      buf[this.pos++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    buf[this.pos++] = n
  }

  /** A 64-bit unsigned number too large for a double's exact range. */
  bigVarint(field: number, u: bigint): void {
    if (u === 0n) return
    this.varint(field * 8 + VARINT)
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80
      u >>= 7n
    }
    this.buf[this.pos++] = Number(u)
  }

  /** A number field, left out when zero (proto3's default). */
  num(field: number, n: number): void {
    if (n === 0) return
    this.varint(field * 8 + VARINT)
    this.varint(n)
  }

  header(field: number, size: number): void {
    this.varint(field * 8 + LEN)
    this.varint(size)
  }

  bytes(field: number, bytes: Uint8Array | undefined): void {
    if (!bytes) return
    this.header(field, bytes.length)
    this.buf.set(bytes, this.pos)
    this.pos += bytes.length
  }

  done(): Buffer {
    if (this.pos !== this.buf.length) throw new Error(`etcd request encoding: wrote ${this.pos} of ${this.buf.length} bytes`)
    return this.buf
  }
}

const bytesSize = (b: Uint8Array | undefined) => (b ? lenField(b.length) : 0)
const flag = (b: boolean | undefined) => (b ? 1 : 0)

function rangeSize(r: RangeRequest): number {
  return (
    bytesSize(r.key) +
    bytesSize(r.range_end) +
    numField(3, r.limit ?? 0) +
    numField(4, r.revision ?? 0) +
    numField(5, SORT_ORDER[r.sort_order ?? 'None']) +
    numField(6, SORT_TARGET[r.sort_target ?? 'Key']) +
    numField(7, flag(r.serializable)) +
    numField(8, flag(r.keys_only)) +
    numField(9, flag(r.count_only))
  )
}

function writeRange(out: Out, r: RangeRequest): void {
  out.bytes(1, r.key)
  out.bytes(2, r.range_end)
  out.num(3, r.limit ?? 0)
  out.num(4, r.revision ?? 0)
  out.num(5, SORT_ORDER[r.sort_order ?? 'None'])
  out.num(6, SORT_TARGET[r.sort_target ?? 'Key'])
  out.num(7, flag(r.serializable))
  out.num(8, flag(r.keys_only))
  out.num(9, flag(r.count_only))
}

/** The lease as int64 on the wire (a negative ID takes its two's complement, as etcd's Go client sends it). */
const leaseOf = (p: PutRequest) => (p.lease ? BigInt.asUintN(64, BigInt(p.lease)) : 0n)

function bigVarintSize(u: bigint): number {
  let size = 1
  while (u >= 0x80n) {
    u >>= 7n
    size++
  }
  return size
}

const leaseSize = (p: PutRequest) => {
  const lease = leaseOf(p)
  return lease === 0n ? 0 : 1 + bigVarintSize(lease)
}
const putSize = (p: PutRequest) => bytesSize(p.key) + bytesSize(p.value) + leaseSize(p)
const deleteSize = (d: DeleteRangeRequest) => bytesSize(d.key) + bytesSize(d.range_end)

function opContentSize(op: RequestOp): number {
  if ('request_range' in op) return rangeSize(op.request_range)
  if ('request_put' in op) return putSize(op.request_put)
  return deleteSize(op.request_delete_range)
}

/** The compared number, in the field of its target (proto3: a zero is still sent, it selects the oneof member). */
function compareNumber(c: Compare): [field: number, value: number] {
  if (c.target === 'Version') return [4, c.version ?? 0]
  if (c.target === 'Create') return [5, c.create_revision ?? 0]
  return [6, c.mod_revision ?? 0]
}

/** The compared bytes of a `Value` compare (field 7; sent even when empty, as it selects the oneof member). */
const comparedValue = (c: Compare): Uint8Array => c.value ?? new Uint8Array(0)

function compareSize(c: Compare): number {
  const head = numField(1, COMPARE_RESULT[c.result]) + numField(2, COMPARE_TARGET[c.target]) + bytesSize(c.key)
  if (c.target === 'Value') return head + lenField(comparedValue(c).length)
  return head + 1 + varintSize(compareNumber(c)[1])
}

function writeCompare(out: Out, c: Compare): void {
  out.num(1, COMPARE_RESULT[c.result])
  out.num(2, COMPARE_TARGET[c.target])
  out.bytes(3, c.key)
  if (c.target === 'Value') {
    out.bytes(7, comparedValue(c))
    return
  }
  const [field, n] = compareNumber(c)
  out.varint(field * 8 + VARINT)
  out.varint(n)
}

export function encodeRangeRequest(r: RangeRequest): Buffer {
  const out = new Out(rangeSize(r))
  writeRange(out, r)
  return out.done()
}

export function encodeTxnRequest(t: TxnRequest): Buffer {
  const compares = t.compare ?? []
  const compareSizes = compares.map(compareSize)
  const ops: [field: number, op: RequestOp, inner: number][] = []
  for (const op of t.success ?? []) ops.push([2, op, opContentSize(op)])
  for (const op of t.failure ?? []) ops.push([3, op, opContentSize(op)])
  let size = 0
  for (const n of compareSizes) size += lenField(n)
  for (const [, , inner] of ops) size += lenField(lenField(inner))
  const out = new Out(size)
  compares.forEach((c, i) => {
    out.header(1, compareSizes[i]!)
    writeCompare(out, c)
  })
  for (const [field, op, inner] of ops) {
    out.header(field, lenField(inner))
    writeOpContent(out, op, inner)
  }
  return out.done()
}

/** The RequestOp message's content: its one set member. */
function writeOpContent(out: Out, op: RequestOp, inner: number): void {
  if ('request_range' in op) {
    out.header(1, inner)
    writeRange(out, op.request_range)
  } else if ('request_put' in op) {
    out.header(2, inner)
    const p = op.request_put
    out.bytes(1, p.key)
    out.bytes(2, p.value)
    out.bigVarint(3, leaseOf(p))
  } else {
    out.header(3, inner)
    out.bytes(1, op.request_delete_range.key)
    out.bytes(2, op.request_delete_range.range_end)
  }
}

// --- decoding ---------------------------------------------------------------

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
}

function decodeHeader(bytes: Uint8Array): ResponseHeader {
  const r = new Reader(bytes)
  let revision = 0
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 3 && wire === VARINT) revision = r.int64()
    else r.skip(wire)
  }
  return { revision }
}

function decodeKeyValue(bytes: Uint8Array): KeyValue {
  const r = new Reader(bytes)
  // The lease (field 6) is left out: the store never reads it, and its 64 bits do not fit a number.
  const kv: KeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) kv.key = asBuffer(r.bytes())
    else if (field === 2 && wire === VARINT) kv.create_revision = r.int64()
    else if (field === 3 && wire === VARINT) kv.mod_revision = r.int64()
    else if (field === 4 && wire === VARINT) kv.version = r.int64()
    else if (field === 5 && wire === LEN) kv.value = asBuffer(r.bytes())
    else r.skip(wire)
  }
  return kv
}

const EMPTY = Buffer.alloc(0)

export function decodeRangeResponse(bytes: Uint8Array): RangeResponse {
  const r = new Reader(bytes)
  const res: RangeResponse = { header: { revision: 0 }, kvs: [], more: false, count: 0 }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) res.header = decodeHeader(r.bytes())
    else if (field === 2 && wire === LEN) res.kvs.push(decodeKeyValue(r.bytes()))
    else if (field === 3 && wire === VARINT) res.more = r.int64() !== 0
    else if (field === 4 && wire === VARINT) res.count = r.int64()
    else r.skip(wire)
  }
  return res
}

/** A ResponseOp: only a range's answer is read (a put's or delete's answer carries nothing the store uses). */
function decodeResponseOp(bytes: Uint8Array): ResponseOp {
  const r = new Reader(bytes)
  const op: ResponseOp = {}
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) op.response_range = decodeRangeResponse(r.bytes())
    else r.skip(wire)
  }
  return op
}

export function decodeTxnResponse(bytes: Uint8Array): TxnResponse {
  const r = new Reader(bytes)
  const res: TxnResponse = { header: { revision: 0 }, succeeded: false, responses: [] }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) res.header = decodeHeader(r.bytes())
    else if (field === 2 && wire === VARINT) res.succeeded = r.int64() !== 0
    else if (field === 3 && wire === LEN) res.responses.push(decodeResponseOp(r.bytes()))
    else r.skip(wire)
  }
  return res
}

// --- the rarer calls: watches, leases, compaction, status --------------------

export interface WatchCreateRequest {
  key: Uint8Array
  range_end?: Uint8Array
  start_revision?: number
  progress_notify?: boolean
  prev_kv?: boolean
}

/** WatchRequest's one member: open a watch on this stream, or ask where etcd stands (WatchProgressRequest). */
export type WatchRequest = { create_request: WatchCreateRequest } | { progress_request: Record<string, never> }

export interface WatchEvent {
  type: 'Put' | 'Delete'
  kv: KeyValue
  prev_kv?: KeyValue
}

export interface WatchResponse {
  header: ResponseHeader
  /** -1 for the answer to a progress request, which belongs to no watcher. */
  watch_id: number
  created: boolean
  canceled: boolean
  compact_revision: number
  cancel_reason: string
  events: WatchEvent[]
}

export function encodeWatchRequest(req: WatchRequest): Buffer {
  if ('progress_request' in req) {
    // Field 3, an empty WatchProgressRequest.
    const out = new Out(2)
    out.header(3, 0)
    return out.done()
  }
  const c = req.create_request
  const inner =
    bytesSize(c.key) + bytesSize(c.range_end) + numField(3, c.start_revision ?? 0) + numField(4, flag(c.progress_notify)) + numField(6, flag(c.prev_kv))
  const out = new Out(lenField(inner))
  out.header(1, inner)
  out.bytes(1, c.key)
  out.bytes(2, c.range_end)
  out.num(3, c.start_revision ?? 0)
  out.num(4, flag(c.progress_notify))
  out.num(6, flag(c.prev_kv))
  return out.done()
}

function decodeEvent(bytes: Uint8Array): WatchEvent {
  const r = new Reader(bytes)
  const event: WatchEvent = { type: 'Put', kv: { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 } }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === VARINT) event.type = r.int64() === 1 ? 'Delete' : 'Put'
    else if (field === 2 && wire === LEN) event.kv = decodeKeyValue(r.bytes())
    else if (field === 3 && wire === LEN) event.prev_kv = decodeKeyValue(r.bytes())
    else r.skip(wire)
  }
  return event
}

export function decodeWatchResponse(bytes: Uint8Array): WatchResponse {
  const r = new Reader(bytes)
  const res: WatchResponse = {
    header: { revision: 0 },
    watch_id: 0,
    created: false,
    canceled: false,
    compact_revision: 0,
    cancel_reason: '',
    events: [],
  }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) res.header = decodeHeader(r.bytes())
    else if (field === 2 && wire === VARINT) res.watch_id = r.int64()
    else if (field === 3 && wire === VARINT) res.created = r.int64() !== 0
    else if (field === 4 && wire === VARINT) res.canceled = r.int64() !== 0
    else if (field === 5 && wire === VARINT) res.compact_revision = r.int64()
    else if (field === 6 && wire === LEN) res.cancel_reason = r.string()
    else if (field === 11 && wire === LEN) res.events.push(decodeEvent(r.bytes()))
    else r.skip(wire)
  }
  return res
}

/** LeaseGrantRequest with etcd choosing the ID. */
export function encodeLeaseGrantRequest(ttlSeconds: number): Buffer {
  const out = new Out(numField(1, ttlSeconds))
  out.num(1, ttlSeconds)
  return out.done()
}

export interface LeaseGrantResponse {
  /** The lease's ID as decimal text: IDs use all 64 bits. */
  ID: string
  TTL: number
  error: string
}

export function decodeLeaseGrantResponse(bytes: Uint8Array): LeaseGrantResponse {
  const r = new Reader(bytes)
  const res: LeaseGrantResponse = { ID: '0', TTL: 0, error: '' }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 2 && wire === VARINT) {
      const [lo, hi] = r.varint64()
      res.ID = BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString()
    } else if (field === 3 && wire === VARINT) res.TTL = r.int64()
    else if (field === 4 && wire === LEN) res.error = r.string()
    else r.skip(wire)
  }
  return res
}

export function encodeCompactionRequest(revision: number, physical: boolean): Buffer {
  const out = new Out(numField(1, revision) + numField(2, flag(physical)))
  out.num(1, revision)
  out.num(2, flag(physical))
  return out.done()
}

/** Maintenance.Status's answer: the fields the server reports. */
export interface StatusResponse {
  header: ResponseHeader
  version: string
  dbSize: number
}

export function decodeStatusResponse(bytes: Uint8Array): StatusResponse {
  const r = new Reader(bytes)
  const res: StatusResponse = { header: { revision: 0 }, version: '', dbSize: 0 }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) res.header = decodeHeader(r.bytes())
    else if (field === 2 && wire === LEN) res.version = r.string()
    else if (field === 3 && wire === VARINT) res.dbSize = r.int64()
    else r.skip(wire)
  }
  return res
}

/** A response's header alone (CompactionResponse and any answer whose other fields go unread). */
export function decodeHeaderOnly(bytes: Uint8Array): { header: ResponseHeader } {
  const r = new Reader(bytes)
  let header: ResponseHeader = { revision: 0 }
  while (!r.eof()) {
    const [field, wire] = r.tag()
    if (field === 1 && wire === LEN) header = decodeHeader(r.bytes())
    else r.skip(wire)
  }
  return { header }
}
