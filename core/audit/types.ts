/**
 * The audit.k8s.io/v1 shapes this server reads (Policy) and writes (Event,
 * EventList), with upstream's field names; an event's members are declared in
 * the order upstream writes them, which is the order they are serialized in.
 */
import type { UserInfo } from '../machinery/object.js'

export const AUDIT_API_VERSION = 'audit.k8s.io/v1'

export const AUDIT_LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const
export type AuditLevel = (typeof AUDIT_LEVELS)[number]

export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const
export type AuditStage = (typeof AUDIT_STAGES)[number]

/** A level is at least another when it records as much (None < Metadata < Request < RequestResponse). */
export const levelAtLeast = (level: AuditLevel, floor: AuditLevel): boolean => AUDIT_LEVELS.indexOf(level) >= AUDIT_LEVELS.indexOf(floor)

export interface GroupResources {
  group?: string
  resources?: string[]
  resourceNames?: string[]
}

export interface AuditPolicyRule {
  level: AuditLevel
  users?: string[]
  userGroups?: string[]
  verbs?: string[]
  resources?: GroupResources[]
  namespaces?: string[]
  nonResourceURLs?: string[]
  omitStages?: AuditStage[]
  omitManagedFields?: boolean
}

export interface AuditPolicy {
  rules: AuditPolicyRule[]
  omitStages?: AuditStage[]
  omitManagedFields?: boolean
}

export interface ObjectReference {
  resource?: string
  namespace?: string
  name?: string
  uid?: string
  apiGroup?: string
  apiVersion?: string
  resourceVersion?: string
  subresource?: string
}

/** The bounded part of a Status an event carries (upstream copies these members only). */
export interface ResponseStatus {
  metadata: Record<string, never>
  status?: string
  message?: string
  reason?: string
  details?: unknown
  code: number
}

export interface AuditEvent {
  kind: 'Event'
  apiVersion: typeof AUDIT_API_VERSION
  level: AuditLevel
  auditID: string
  stage: AuditStage
  requestURI: string
  verb: string
  user: UserInfo
  impersonatedUser?: UserInfo
  sourceIPs?: string[]
  userAgent?: string
  objectRef?: ObjectReference
  responseStatus?: ResponseStatus
  requestObject?: unknown
  responseObject?: unknown
  requestReceivedTimestamp: string
  stageTimestamp: string
  annotations?: Record<string, string>
}

/**
 * Where events go (upstream's audit.Backend): the log file, the webhook, or
 * both. `processEvents` resolves once the events are written (blocking modes)
 * or queued (batch mode), and rejects when they could not be.
 */
export interface AuditBackend {
  readonly name: string
  processEvents(events: readonly AuditEvent[]): Promise<void>
  /** blocking-strict: a RequestReceived event that cannot be written fails its request. */
  readonly failRequestOnError?: boolean
  /** Writes what is still queued; called at shutdown. */
  shutdown?(): Promise<void>
}
