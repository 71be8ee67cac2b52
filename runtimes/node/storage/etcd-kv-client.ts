/**
 * etcd's KV Range and Txn for the store, on the lean unary path
 * (etcd-unary.ts, etcd-wire.ts), with the same fault handling as the etcd3
 * client (etcd-fault-policy.ts): each member has its own circuit breaker, a
 * call that never reached a member goes to the next one, nothing that may
 * have reached etcd is sent again, and every call has a deadline.
 */
import type { EtcdConnectionOptions } from './etcd-client.js'
import { faultHandling } from './etcd-fault-policy.js'
import { UnaryMember } from './etcd-unary.js'
import {
  decodeRangeResponse,
  decodeTxnResponse,
  encodeRangeRequest,
  encodeTxnRequest,
  type RangeRequest,
  type RangeResponse,
  type TxnRequest,
  type TxnResponse,
} from './etcd-wire.js'

type Policies = ReturnType<typeof faultHandling>
type Policy = NonNullable<Policies['global']>

interface Member {
  unary: UnaryMember
  circuit: Policy
}

const RANGE = '/etcdserverpb.KV/Range'
const TXN = '/etcdserverpb.KV/Txn'

export class EtcdKvClient {
  private readonly members: Member[]
  private readonly global: Policy
  private readonly timeoutMs: number

  constructor(opts: EtcdConnectionOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd: at least one endpoint is required')
    const policies = faultHandling(opts.circuit, opts.endpoints.length)
    this.global = policies.global!
    this.timeoutMs = opts.requestTimeoutMs ?? 10000
    this.members = opts.endpoints.map((endpoint) => {
      const unary = new UnaryMember(endpoint, opts.tls ? { tls: opts.tls } : {})
      return { unary, circuit: policies.host!(unary.host) }
    })
  }

  /** `timeoutMs`: this call's deadline instead of the client's. */
  range(req: RangeRequest, timeoutMs?: number): Promise<RangeResponse> {
    return this.exec(RANGE, encodeRangeRequest(req), decodeRangeResponse, timeoutMs)
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.exec(TXN, encodeTxnRequest(req), decodeTxnResponse)
  }

  close(): void {
    for (const m of this.members) m.unary.close()
  }

  private exec<T>(path: string, request: Buffer, decode: (message: Buffer) => T, timeoutMs = this.timeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs
    // One walk over the members per call, from a random one, shared by the global policy's attempts
    // (as etcd3's shuffled hosts): an attempt after an unreachable member goes on to the next.
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
          return member.unary.call(path, request, deadline, decode)
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
