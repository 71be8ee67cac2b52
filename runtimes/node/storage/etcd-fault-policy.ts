/**
 * The etcd client's fault handling, made explicit.
 *
 * Generic clients retry every call a few times and pause a member for
 * seconds after a few failures. Here:
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
 */
import { isRecoverableError } from './etcd-grpc-status.js'

interface PolicyContext {
  signal: AbortSignal
}

/** Runs a call under a policy: once, again on another member, or not at all while a circuit is open. */
export interface Policy {
  execute<T>(fn: (context: PolicyContext) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T>
}

export interface FaultHandling {
  /** Around each call as a whole (all its attempts). */
  global: Policy
  /** Around each attempt on the member `host`. */
  host: (host: string) => Policy
}

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

const neverAborted = new AbortController().signal

/** Runs each call once: no retry, no pause. */
class PassThroughPolicy implements Policy {
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
 * Around every call: it is handed the whole attempt, which walks the
 * members from a random one; running it again goes to the next member.
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

/** One member's breaker; only recoverable failures (transport, deadline, overload) count. */
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

/** The policies of a client of `members` members. */
export function faultHandling(opts: CircuitOptions = {}, members = 1): FaultHandling {
  const threshold = Math.max(1, opts.failureThreshold ?? 3)
  const openMs = Math.max(0, opts.openMs ?? 1000)
  return {
    global: members > 1 ? new NextMemberWhenUnreachable(members) : new PassThroughPolicy(),
    host: (host) => new MemberCircuit(host, threshold, openMs),
  }
}
