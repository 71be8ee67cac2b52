/**
 * The store's etcd client: endpoints (`--kvstore-servers`), TLS
 * (`--kvstore-cafile`/`--kvstore-certfile`/`--kvstore-keyfile`), a deadline
 * on every unary call, keepalive, and the explicit fault policy
 * (etcd-fault-policy.ts): each member has its own circuit breaker, a call
 * that never reached a member goes to the next one, nothing that may have
 * reached etcd is sent again. Messages are etcd-wire.ts's, carried by
 * etcd-member.ts.
 */
import { readFile } from 'node:fs/promises'
import { type CircuitOptions, faultHandling, type Policy } from './etcd-fault-policy.js'
import { type CallStream, EtcdMember, type StreamHandlers } from './etcd-member.js'
import {
  decodeHeaderOnly,
  decodeLeaseGrantResponse,
  decodeRangeResponse,
  decodeStatusResponse,
  decodeTxnResponse,
  encodeCompactionRequest,
  encodeLeaseGrantRequest,
  encodeRangeRequest,
  encodeTxnRequest,
  type LeaseGrantResponse,
  type RangeRequest,
  type RangeResponse,
  type StatusResponse,
  type TxnRequest,
  type TxnResponse,
} from './etcd-wire.js'

/** PEM contents (not paths): see `readEtcdTlsFiles` for the daemon's file flags. */
export interface EtcdTls {
  /** CA bundle that signed etcd's serving certificate; absent = the system's roots. */
  ca?: string | Uint8Array
  /** Client certificate and key, for etcd started with --client-cert-auth. */
  cert?: string | Uint8Array
  key?: string | Uint8Array
}

export interface EtcdConnectionOptions {
  /** `scheme://host:port` of each member (`--kvstore-servers`). https members use TLS. */
  endpoints: string[]
  tls?: EtcdTls
  /** Deadline of each request (not of watches). @default 10000 */
  requestTimeoutMs?: number
  /** The per-member circuit breaker. @default { failureThreshold: 3, openMs: 1000 } */
  circuit?: CircuitOptions
}

/** Reads the three `--kvstore-*file` flags' files; an unset path stays unset. */
export async function readEtcdTlsFiles(files: { caFile?: string; certFile?: string; keyFile?: string }): Promise<EtcdTls | undefined> {
  const read = async (flag: string, path: string | undefined) => {
    if (!path) return undefined
    try {
      return await readFile(path)
    } catch (err) {
      throw new Error(`${flag}: cannot read ${path}: ${(err as Error).message}`)
    }
  }
  const [ca, cert, key] = await Promise.all([
    read('--kvstore-cafile', files.caFile),
    read('--kvstore-certfile', files.certFile),
    read('--kvstore-keyfile', files.keyFile),
  ])
  if (!ca && !cert && !key) return undefined
  const tls: EtcdTls = {}
  if (ca) tls.ca = ca
  if (cert) tls.cert = cert
  if (key) tls.key = key
  return tls
}

interface Member {
  connection: EtcdMember
  /**
   * A second connection, for watch streams. With the watches' events on the
   * connection of the writes' answers, the daemon spent some 6% more CPU per
   * create on etcd (side by side in alternating rounds); apart, as much as
   * with the general gRPC client's separate channel.
   */
  streams: EtcdMember
  circuit: Policy
}

const RANGE = '/etcdserverpb.KV/Range'
const TXN = '/etcdserverpb.KV/Txn'
const COMPACT = '/etcdserverpb.KV/Compact'
const LEASE_GRANT = '/etcdserverpb.Lease/LeaseGrant'
const STATUS = '/etcdserverpb.Maintenance/Status'
const WATCH = '/etcdserverpb.Watch/Watch'
const NO_MESSAGE = Buffer.alloc(0)

export class EtcdClient {
  private readonly members: Member[]
  private readonly global: Policy
  private readonly timeoutMs: number
  /** Where the next watch stream goes: streams spread over the members, and a retry moves on. */
  private nextStreamMember = 0

  constructor(opts: EtcdConnectionOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd: at least one endpoint is required')
    const tls = opts.tls
    if (tls && !tls.cert !== !tls.key) throw new Error('etcd: a client certificate needs its key, and a key its certificate')
    const policies = faultHandling(opts.circuit, opts.endpoints.length)
    this.global = policies.global
    this.timeoutMs = opts.requestTimeoutMs ?? 10000
    this.members = opts.endpoints.map((endpoint) => {
      const connection = new EtcdMember(endpoint, tls ? { tls } : {})
      return { connection, streams: new EtcdMember(endpoint, tls ? { tls } : {}), circuit: policies.host(connection.host) }
    })
    this.nextStreamMember = Math.floor(Math.random() * this.members.length)
  }

  /** `timeoutMs`: this call's deadline instead of the client's. */
  range(req: RangeRequest, timeoutMs?: number): Promise<RangeResponse> {
    return this.call(RANGE, encodeRangeRequest(req), decodeRangeResponse, timeoutMs)
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.call(TXN, encodeTxnRequest(req), decodeTxnResponse)
  }

  /** Discards history up to `revision`; `physical`: answers once the space is reclaimed. */
  async compact(revision: number, physical: boolean): Promise<void> {
    await this.call(COMPACT, encodeCompactionRequest(revision, physical), decodeHeaderOnly)
  }

  leaseGrant(ttlSeconds: number): Promise<LeaseGrantResponse> {
    return this.call(LEASE_GRANT, encodeLeaseGrantRequest(ttlSeconds), decodeLeaseGrantResponse)
  }

  /** The status of the member that answers (its database size among it). */
  status(timeoutMs?: number): Promise<StatusResponse> {
    return this.call(STATUS, NO_MESSAGE, decodeStatusResponse, timeoutMs)
  }

  /**
   * A watch stream on the next member, on its connection for watches
   * (etcd-member.ts says how a stream ends). Each new stream goes to the
   * member after the last one's, so a watch that lost its member starts
   * again elsewhere. Throws ClientClosedError after close().
   */
  watchStream(handlers: StreamHandlers): CallStream {
    const member = this.members[this.nextStreamMember++ % this.members.length]!
    return member.streams.stream(WATCH, handlers)
  }

  /** No new calls or streams; those under way finish. */
  close(): void {
    for (const m of this.members) {
      m.connection.close()
      m.streams.close()
    }
  }

  private call<T>(path: string, request: Buffer, decode: (message: Buffer) => T, timeoutMs = this.timeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs
    // One walk over the members per call, from a random one, shared by the global policy's attempts:
    // an attempt after an unreachable member goes on to the next.
    const walk = { next: this.members.length === 1 ? 0 : Math.floor(Math.random() * this.members.length) }
    return this.global.execute(() => this.onSomeMember(path, request, decode, deadline, walk))
  }

  /** Members in turn from where the walk stands: one whose circuit is open is passed over; the first one called answers. */
  private async onSomeMember<T>(
    path: string,
    request: Buffer,
    decode: (message: Buffer) => T,
    deadline: number,
    walk: { next: number },
  ): Promise<T> {
    const n = this.members.length
    let lastError: unknown
    for (let i = 0; i < n; i++) {
      const member = this.members[walk.next++ % n]!
      let calledThrough = false
      try {
        return await member.circuit.execute(() => {
          calledThrough = true
          return member.connection.call(path, request, deadline, decode)
        })
      } catch (err) {
        // Called and failed: that answer stands (the global policy decides about another member).
        if (calledThrough) throw err
        lastError = err
      }
    }
    throw lastError
  }
}
