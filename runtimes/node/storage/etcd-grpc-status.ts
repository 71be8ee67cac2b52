/**
 * A failed etcd call as an error: the gRPC status etcd (or the transport)
 * ended it with, worded as gRPC's clients word it (`14 UNAVAILABLE: ...`),
 * so logs and the 503s built from them read as they did with a generic
 * gRPC client.
 *
 * Which statuses are recoverable (say nothing about the request itself, so
 * the fault policy counts them against the member) follows gRPC's status
 * code guide: the transport failed, a deadline passed, the member is
 * overloaded or restarting.
 */

/** gRPC's status codes (grpc/doc/statuscodes.md); the numbers are the wire contract. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(GrpcStatus).map(([name, code]) => [code, name]))

const RECOVERABLE = new Set<number>([
  GrpcStatus.CANCELLED,
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
])

/** A call that ended with a status other than OK. */
export class EtcdCallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${NAMES[code] ?? 'UNKNOWN'}: ${details}`)
    this.name = 'EtcdCallError'
  }
}

/** A call made after the client was closed. */
export class ClientClosedError extends Error {
  constructor() {
    super('the etcd client was already closed')
    this.name = 'ClientClosedError'
  }
}

/** True for a failure of the transport, a deadline or an overloaded member: another attempt may succeed. */
export function isRecoverableError(err: unknown): boolean {
  return err instanceof EtcdCallError && RECOVERABLE.has(err.code)
}

/** etcd answers a compacted and a future revision both with OUT_OF_RANGE; only the text tells them apart. */
export function isOutOfRange(err: unknown, text: string): boolean {
  return err instanceof EtcdCallError && err.code === GrpcStatus.OUT_OF_RANGE && err.details.includes(text)
}
