/**
 * What core's spans share through the OpenTelemetry context: the request's
 * audit ID (upstream puts it on the HTTP span and on every storage span, so
 * a trace leads to the audit log and back). The context travels with the
 * request's async work when the runtime installs a context manager
 * (runtimes/node/daemon/tracing.ts); without one, spans still start, unparented.
 */
import { type Context, context, createContextKey } from '@opentelemetry/api'

const AUDIT_ID = createContextKey('k8s.io/apiserver audit-id')

export function withAuditId(ctx: Context, auditID: string): Context {
  return ctx.setValue(AUDIT_ID, auditID)
}

/** upstream's GetAuditIDTruncated: IDs longer than 64 characters are cut, as a span attribute need not carry more. */
export function activeAuditId(): string {
  const id = context.active().getValue(AUDIT_ID)
  return typeof id === 'string' ? id.slice(0, 64) : ''
}

/** The scope name of the spans core starts. */
export const TRACER_NAME = 'k8s.io/apiserver'
