/**
 * The metrics dashboards read, with upstream's names, types, labels and
 * buckets (kube-apiserver 1.32; the stability level leads the help text as
 * component-base writes it). The help texts are this server's own words.
 */
import { exponentialBuckets } from './metrics.js'

export interface MetricDefinition {
  name: string
  help: string
  buckets?: readonly number[]
}

/** Upstream's request-latency buckets (seconds), shared by the request and etcd histograms. */
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]
const ADMISSION_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5]
const AUTH_BUCKETS = exponentialBuckets(0.001, 2, 15)

export const REQUEST_TOTAL: MetricDefinition = {
  name: 'apiserver_request_total',
  help: '[STABLE] Requests answered, by verb, dry run, group, version, resource, subresource, scope, component and HTTP code.',
}
export const REQUEST_DURATION: MetricDefinition = {
  name: 'apiserver_request_duration_seconds',
  help: '[STABLE] Time to answer a request in seconds, by verb, dry run, group, version, resource, subresource, scope and component.',
  buckets: LATENCY_BUCKETS,
}
export const REQUEST_TERMINATIONS: MetricDefinition = {
  name: 'apiserver_request_terminations_total',
  help: '[ALPHA] Requests the server ended itself to protect itself (refused with 429 by max-in-flight or priority and fairness), by verb, group, version, resource, subresource, scope, component and HTTP code.',
}
export const RESPONSE_SIZES: MetricDefinition = {
  name: 'apiserver_response_sizes',
  help: '[STABLE] Size in bytes of the answers to reads, by verb, group, version, resource, subresource, scope and component.',
  buckets: exponentialBuckets(1000, 10, 7),
}
export const LONGRUNNING_REQUESTS: MetricDefinition = {
  name: 'apiserver_longrunning_requests',
  help: '[STABLE] Long-running requests (watches, proxies, exec and the like) open now, by verb, group, version, resource, scope and component.',
}
export const CURRENT_INFLIGHT: MetricDefinition = {
  name: 'apiserver_current_inflight_requests',
  help: '[STABLE] Requests being served now, read-only and mutating apart.',
}
export const CURRENT_INQUEUE: MetricDefinition = {
  name: 'apiserver_current_inqueue_requests',
  help: '[ALPHA] Requests waiting in a priority and fairness queue now, read-only and mutating apart.',
}
export const REGISTERED_WATCHERS: MetricDefinition = {
  name: 'apiserver_registered_watchers',
  help: '[ALPHA] Watches open now, by group, version and kind.',
}
export const WATCH_EVENTS: MetricDefinition = {
  name: 'apiserver_watch_events_total',
  help: '[ALPHA] Events sent to watch clients, by group, version and kind.',
}
export const WATCH_EVENT_SIZES: MetricDefinition = {
  name: 'apiserver_watch_events_sizes',
  help: '[ALPHA] Size in bytes of the events sent to watch clients, by group, version and kind.',
  buckets: exponentialBuckets(1024, 2, 8),
}
export const ETCD_REQUEST_DURATION: MetricDefinition = {
  name: 'etcd_request_duration_seconds',
  help: '[ALPHA] Time of a call to the storage in seconds, by operation and resource type.',
  buckets: LATENCY_BUCKETS,
}
export const ETCD_REQUESTS_TOTAL: MetricDefinition = {
  name: 'etcd_requests_total',
  help: '[ALPHA] Calls to the storage, by operation and resource type.',
}
export const ETCD_REQUEST_ERRORS: MetricDefinition = {
  name: 'etcd_request_errors_total',
  help: '[ALPHA] Calls to the storage that failed, by operation and resource type.',
}
export const STORAGE_SIZE: MetricDefinition = {
  name: 'apiserver_storage_size_bytes',
  help: '[STABLE] Size in bytes of the storage database file as the store reports it, by storage cluster.',
}
export const AUTHENTICATED_USER_REQUESTS: MetricDefinition = {
  name: 'authenticated_user_requests',
  help: '[ALPHA] Authenticated requests, by a coarse username (a few known identities, email_id or other).',
}
export const AUTHENTICATION_ATTEMPTS: MetricDefinition = {
  name: 'authentication_attempts',
  help: '[ALPHA] Authentication attempts, by result.',
}
export const AUTHENTICATION_DURATION: MetricDefinition = {
  name: 'authentication_duration_seconds',
  help: '[ALPHA] Time to authenticate a request in seconds, by result.',
  buckets: AUTH_BUCKETS,
}
export const AUTHORIZATION_ATTEMPTS: MetricDefinition = {
  name: 'authorization_attempts_total',
  help: '[ALPHA] Authorization attempts, by result.',
}
export const AUTHORIZATION_DURATION: MetricDefinition = {
  name: 'authorization_duration_seconds',
  help: '[ALPHA] Time to authorize a request in seconds, by result.',
  buckets: AUTH_BUCKETS,
}
export const AUTHORIZATION_DECISIONS: MetricDefinition = {
  name: 'apiserver_authorization_decisions_total',
  help: '[ALPHA] Final decisions of the authorizers, by authorizer type, name and decision.',
}
export const ADMISSION_STEP_DURATION: MetricDefinition = {
  name: 'apiserver_admission_step_admission_duration_seconds',
  help: '[STABLE] Time of one admission step (mutating or validating) in seconds, by operation, rejection and type.',
  buckets: ADMISSION_BUCKETS,
}
export const ADMISSION_CONTROLLER_DURATION: MetricDefinition = {
  name: 'apiserver_admission_controller_admission_duration_seconds',
  help: '[STABLE] Time of one admission plugin in seconds, by plugin name, operation, rejection and type.',
  buckets: ADMISSION_BUCKETS,
}
export const ADMISSION_WEBHOOK_DURATION: MetricDefinition = {
  name: 'apiserver_admission_webhook_admission_duration_seconds',
  help: '[STABLE] Time of one admission webhook call in seconds, by webhook name, operation, rejection and type.',
  buckets: [...ADMISSION_BUCKETS, 10, 25],
}
export const ADMISSION_WEBHOOK_REQUESTS: MetricDefinition = {
  name: 'apiserver_admission_webhook_request_total',
  help: '[ALPHA] Admission webhook calls, by webhook name, type, operation, HTTP code and rejection.',
}
export const ADMISSION_WEBHOOK_REJECTIONS: MetricDefinition = {
  name: 'apiserver_admission_webhook_rejection_count',
  help: '[ALPHA] Requests an admission webhook refused, by webhook name, type, operation, error type and the refusal\'s HTTP code.',
}
export const ADMISSION_WEBHOOK_FAIL_OPEN: MetricDefinition = {
  name: 'apiserver_admission_webhook_fail_open_count',
  help: '[ALPHA] Failed admission webhook calls let through by failurePolicy Ignore, by webhook name and type.',
}

export const ENCRYPTION_RELOADS: MetricDefinition = {
  name: 'apiserver_encryption_config_controller_automatic_reloads_total',
  help: '[ALPHA] Automatic reloads of the encryption configuration, by outcome (success or failure) and server.',
}
export const ENCRYPTION_LAST_RELOAD: MetricDefinition = {
  name: 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds',
  help: '[ALPHA] When the encryption configuration was last reloaded automatically (Unix seconds), by outcome and server.',
}

/** The health check SLIs, served apart on `/metrics/slis` as upstream's component-base serves them. */
export const HEALTHCHECK: MetricDefinition = {
  name: 'kubernetes_healthcheck',
  help: '[STABLE] The result of the last run of a health check: 1 when it passed, 0 when it failed, by check name and endpoint (healthz, livez, readyz).',
}
export const HEALTHCHECKS_TOTAL: MetricDefinition = {
  name: 'kubernetes_healthchecks_total',
  help: '[STABLE] Runs of each health check, by check name, endpoint (healthz, livez, readyz) and outcome (success or error).',
}
