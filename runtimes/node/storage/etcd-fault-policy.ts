/**
 * The etcd client's fault handling, made explicit (etcd3's `faultHandling`).
 *
 * etcd3's defaults retry every call three times and pause a member for five
 * seconds after three failures. Here:
 * - no call is retried by the client once it may have reached etcd: a write
 *   that reached etcd before the connection broke must not be applied twice,
 *   and the caller (the registry, then the HTTP client with its 503) decides
 *   whether to try again;
 * - a call that never reached a member (no connection to it could be made:
 *   it is down) goes to the next member, as etcd's own Go client does, so a
 *   cluster that lost one member of three still answers every call;
 * - each member has a circuit breaker: after `failureThreshold` consecutive
 *   connection-level failures, calls to it fail at once for `openMs`, then one
 *   probe goes through; its success closes the circuit. With a short `openMs`
 *   the store recovers about a second after etcd comes back, by itself.
 *
 * The policies are small objects with cockatiel's `IPolicy` shape (the type
 * comes from etcd3's options), so the project depends on etcd3 alone.
 */
import { type IOptions, isRecoverableError } from 'etcd3'

type FaultHandling = NonNullable<IOptions['faultHandling']>
type Policy = NonNullable<FaultHandling['global']>
type PolicyContext = Parameters<Parameters<Policy['execute']>[0]>[0]

export interface CircuitOptions {
  /** Consecutive failures that open a member's circuit. @default 3 */
  failureThreshold?: number
  /** How long an open circuit fails calls at once before letting a probe through. @default 1000 */
  openMs?: number
}

/** Thrown instead of calling a member whose circuit is open. */
export class CircuitOpenError extends Error {
  constructor(host: string, failures: number, retryInMs: number) {
    super(`${failures} consecutive failures talking to ${host}; the next attempt is in ${Math.max(0, retryInMs)}ms`)
    this.name = 'CircuitOpenError'
  }
}

const noEvent = () => ({ dispose: () => undefined })
const neverAborted = new AbortController().signal

/** Runs each call once: no retry, no pause. */
class PassThroughPolicy {
  declare readonly _altReturn: never
  readonly onSuccess = noEvent
  readonly onFailure = noEvent

  async execute<T>(fn: (context: PolicyContext) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    return fn({ signal: signal ?? neverAborted })
  }
}

/**
 * gRPC's words for a call that failed before it was sent: the channel had no
 * connection (the member refused or could not be dialled).
 */
const NEVER_SENT = /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|Failed to connect/

export function neverReachedEtcd(err: unknown): boolean {
  return err instanceof CircuitOpenError || (err instanceof Error && isRecoverableError(err) && NEVER_SENT.test(err.message))
}

/**
 * Around every call: etcd3 hands it the whole attempt, which walks the
 * members in a shuffled order; running it again goes to the next member.
 * It is run again only when the member was never reached, at most twice per
 * member (a new shuffle may start with the member that just failed).
 */
class NextMemberWhenUnreachable extends PassThroughPolicy {
  constructor(private readonly members: number) {
    super()
  }

  override async execute<T>(fn: (context: PolicyContext) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    const context = { signal: signal ?? neverAborted }
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(context)
      } catch (err) {
        if (attempt >= 2 * this.members || !neverReachedEtcd(err) || context.signal.aborted) throw err
      }
    }
  }
}

/** One member's breaker; only failures etcd3 calls recoverable (transport, deadline, overload) count. */
class MemberCircuit extends PassThroughPolicy {
  private failures = 0
  private openUntil = 0
  private probing = false

  constructor(
    private readonly host: string,
    private readonly threshold: number,
    private readonly openMs: number,
  ) {
    super()
  }

  override async execute<T>(fn: (context: PolicyContext) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    const open = this.failures >= this.threshold
    if (open && (Date.now() < this.openUntil || this.probing)) {
      throw new CircuitOpenError(this.host, this.failures, this.openUntil - Date.now())
    }
    this.probing = open
    try {
      const result = await fn({ signal: signal ?? neverAborted })
      this.failures = 0
      return result
    } catch (err) {
      if (err instanceof Error && isRecoverableError(err)) {
        this.failures++
        if (this.failures >= this.threshold) this.openUntil = Date.now() + this.openMs
      } else {
        // etcd answered (with a refusal): the member is reachable.
        this.failures = 0
      }
      throw err
    } finally {
      if (open) this.probing = false
    }
  }
}

/** The `faultHandling` option for `new Etcd3(...)`. */
export function faultHandling(opts: CircuitOptions = {}, members = 1): FaultHandling {
  const threshold = Math.max(1, opts.failureThreshold ?? 3)
  const openMs = Math.max(0, opts.openMs ?? 1000)
  return {
    global: members > 1 ? new NextMemberWhenUnreachable(members) : new PassThroughPolicy(),
    host: (host) => new MemberCircuit(host, threshold, openMs),
  }
}
