/**
 * The audit of one server: the policy, the backends, and the metrics. For
 * each request it makes a RequestAudit that the filters fill in (the user,
 * the authorization decision, the impersonated user) and that writes the
 * events of the stages the policy keeps.
 */
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logging/logger.js'
import type { DroppedEvents } from './batch.js'
import { extended, type UserInfo } from '../machinery/object.js'
import { auditEvent, type EventStart, microTime, withoutManagedFields, withRequestObjectMeta } from './event.js'
import { type AuditAttributes, type AuditDecision, PolicyChecker } from './policy.js'
import { type AuditBackend, type AuditEvent, type AuditPolicy, type AuditStage, levelAtLeast, type ResponseStatus } from './types.js'

const EVENT_TOTAL = 'apiserver_audit_event_total'
const ERROR_TOTAL = 'apiserver_audit_error_total'
const LEVEL_TOTAL = 'apiserver_audit_level_total'
const REJECTED_TOTAL = 'apiserver_audit_requests_rejected_total'

export class Auditor {
  private readonly checker: PolicyChecker
  private readonly backends: readonly AuditBackend[]

  constructor(
    policy: AuditPolicy,
    backends: readonly AuditBackend[] | ((dropped: DroppedEvents) => readonly AuditBackend[]),
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {
    this.checker = new PolicyChecker(policy)
    this.backends = typeof backends === 'function' ? backends(this.dropped) : backends
  }

  /** Counts and logs events a backend could not take (upstream's HandlePluginError). */
  readonly dropped = (plugin: string, reason: string, events: readonly AuditEvent[]): void => {
    this.metrics.addCounter(ERROR_TOTAL, '[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', { plugin }, events.length)
    this.logger.error({ plugin, reason, events: events.length }, 'Error in audit plugin affects events')
  }

  /** A request failed because its RequestReceived event could not be written (blocking-strict). */
  rejected(): void {
    this.metrics.addCounter(REJECTED_TOTAL, '[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.', {})
  }

  begin(attrs: AuditAttributes, start: Omit<EventStart, 'level' | 'user' | 'requestReceivedTimestamp'>): RequestAudit {
    const decision = this.checker.decide(attrs)
    this.metrics.addCounter(LEVEL_TOTAL, '[ALPHA] Counter of policy levels for audit events (1 per request).', { level: decision.level })
    // Object.assign, not a spread with the keys added: one per audited request (core/machinery/object.ts, `extended`).
    return new RequestAudit(
      this,
      decision,
      extended(start, {
        level: decision.level,
        // No user (authentication refused the request): upstream's empty UserInfo, whose fields Go leaves out.
        user: attrs.user ?? ({} as UserInfo),
        requestReceivedTimestamp: microTime(this.now()),
      }),
    )
  }

  /** Hands one event to every backend; rejects when a backend that fails requests on error could not write it. */
  async write(ev: AuditEvent): Promise<void> {
    this.metrics.addCounter(EVENT_TOTAL, '[ALPHA] Counter of audit events generated and sent to the audit backend.', {})
    const strict: Promise<void>[] = []
    for (const backend of this.backends) {
      const written = backend.processEvents([ev]).catch((err: unknown) => {
        this.dropped(backend.name, err instanceof Error ? err.message : String(err), [ev])
        if (backend.failRequestOnError) throw err
      })
      strict.push(written)
    }
    await Promise.all(strict)
  }

  timestamp(): string {
    return microTime(this.now())
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.shutdown?.()))
  }
}

/** What one request's events carry, filled in as the request passes the filters. */
export class RequestAudit {
  readonly annotations: Record<string, string> = {}
  impersonatedUser: UserInfo | undefined
  private requestObject: unknown
  private stagesWritten = 0

  constructor(
    private readonly auditor: Auditor,
    private readonly decision: AuditDecision,
    private start: EventStart,
  ) {}

  get level(): AuditDecision['level'] {
    return this.decision.level
  }

  /** Whether the request object is wanted (level Request or more). */
  get wantsRequestObject(): boolean {
    return levelAtLeast(this.decision.level, 'Request')
  }

  get wantsResponseObject(): boolean {
    return levelAtLeast(this.decision.level, 'RequestResponse')
  }

  /**
   * The object a create or update handler decoded: the events of the stages
   * still to come name it (RequestReceived has gone out already, as upstream's has).
   */
  readonly requestObjectDecoded = (obj: unknown): void => {
    this.start = { ...this.start, objectRef: withRequestObjectMeta(this.start.objectRef, obj) }
  }

  setRequestObject(obj: unknown): void {
    this.requestObject = this.decision.omitManagedFields ? withoutManagedFields(obj) : obj
  }

  /** Writes the event of a stage unless the level is None or the policy omits the stage. */
  async stage(stage: AuditStage, status?: ResponseStatus, responseObject?: unknown): Promise<void> {
    if (this.decision.level === 'None' || this.decision.omitStages.has(stage)) return
    this.stagesWritten++
    const withObjects = levelAtLeast(this.decision.level, 'Request')
    const parts: Partial<AuditEvent> = {
      ...(this.impersonatedUser ? { impersonatedUser: this.impersonatedUser } : {}),
      ...(status ? { responseStatus: status } : {}),
      ...(withObjects && this.requestObject !== undefined ? { requestObject: this.requestObject } : {}),
      ...(this.wantsResponseObject && responseObject !== undefined
        ? { responseObject: this.decision.omitManagedFields ? withoutManagedFields(responseObject) : responseObject }
        : {}),
      ...(levelAtLeast(this.decision.level, 'Metadata') ? { annotations: { ...this.annotations } } : {}),
    }
    await this.auditor.write(auditEvent(this.start, stage, parts, this.auditor.timestamp()))
  }
}
