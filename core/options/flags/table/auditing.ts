/**
 * Auditing flags (spec: "Events": the log backend, the webhook backend).
 * The two backends share their batching and truncation flags; only the
 * defaults differ.
 */
import { flag } from '../spec.js'

const section = 'Auditing'
// The policy and both backends are in effect.
const active = { status: 'active' } as const

export const AUDIT_MODES = ['batch', 'blocking', 'blocking-strict'] as const
export const AUDIT_LOG_FORMATS = ['legacy', 'json'] as const
export const AUDIT_GROUP_VERSIONS = ['audit.k8s.io/v1'] as const

interface BackendDefaults {
  mode: string
  maxBatchSize: number
  maxBatchWaitMs: number
  throttle: boolean
  throttleQps: number
  throttleBurst: number
}

/** The flags both backends have, named `--audit-<backend>-...`. */
function backendFlags<const B extends 'log' | 'webhook'>(backend: B, d: BackendDefaults) {
  const state = active
  const batchOnly = 'Only used in batch mode.'
  return [
    flag({
      name: `audit-${backend}-mode`,
      kind: 'string',
      default: d.mode,
      section,
      ...state,
      help: `How events reach the ${backend} backend: batch (buffered, written asynchronously), blocking (each response waits until its events are handed over) or blocking-strict (as blocking, and a request fails when its first event cannot be written).`,
    }),
    flag({
      name: `audit-${backend}-batch-buffer-size`,
      kind: 'int',
      default: 10000,
      section,
      ...state,
      help: `Events buffered before they are batched and written. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-batch-max-size`,
      kind: 'int',
      default: d.maxBatchSize,
      section,
      ...state,
      help: `Most events in one batch. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-batch-max-wait`,
      kind: 'duration',
      default: d.maxBatchWaitMs,
      section,
      ...state,
      help: `How long a batch that is not full may wait before it is written anyway. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-batch-throttle-enable`,
      kind: 'bool',
      default: d.throttle,
      section,
      ...state,
      help: `Throttle the batches sent. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-batch-throttle-qps`,
      kind: 'float',
      default: d.throttleQps,
      section,
      ...state,
      help: `Most batches per second on average, when throttling. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-batch-throttle-burst`,
      kind: 'int',
      default: d.throttleBurst,
      section,
      ...state,
      help: `Most batches sent at the same moment when the throttle rate was not used before. ${batchOnly}`,
    }),
    flag({
      name: `audit-${backend}-truncate-enabled`,
      kind: 'bool',
      default: false,
      section,
      ...state,
      help: 'Truncate events and batches that exceed the limits below.',
    }),
    flag({
      name: `audit-${backend}-truncate-max-batch-size`,
      kind: 'int64',
      default: 10485760,
      section,
      ...state,
      help: 'Largest batch sent, in bytes (the serialized batch may exceed it by a few hundred bytes); a larger batch is split.',
    }),
    flag({
      name: `audit-${backend}-truncate-max-event-size`,
      kind: 'int64',
      default: 102400,
      section,
      ...state,
      help: 'Largest event sent, in bytes; a larger event loses its request and response bodies first, and is dropped if still too big.',
    }),
    flag({
      name: `audit-${backend}-version`,
      kind: 'string',
      default: 'audit.k8s.io/v1',
      section,
      ...state,
      help: `API group and version of the events written to the ${backend} backend.`,
    }),
  ] as const
}

export const AUDITING_FLAGS = [
  flag({
    name: 'audit-policy-file',
    kind: 'string',
    default: '',
    section,
    ...active,
    help: 'File of the audit policy: which requests are recorded, at which level. Without it no events are recorded.',
  }),
  flag({
    name: 'audit-log-path',
    kind: 'string',
    default: '',
    section,
    ...active,
    help: "File that receives the audit events of every request; '-' means standard output. Setting it turns the log backend on.",
  }),
  flag({
    name: 'audit-log-format',
    kind: 'string',
    default: 'json',
    section,
    ...active,
    help: "Format of the audit log: 'legacy' (one line of text per event) or 'json'.",
  }),
  flag({
    name: 'audit-log-maxage',
    kind: 'int',
    default: 0,
    section,
    ...active,
    help: 'Days to keep rotated audit log files, judged by the time stamp in their names.',
  }),
  flag({
    name: 'audit-log-maxbackup',
    kind: 'int',
    default: 0,
    section,
    ...active,
    help: 'Rotated audit log files to keep; 0 keeps them all.',
  }),
  flag({
    name: 'audit-log-maxsize',
    kind: 'int',
    default: 0,
    section,
    ...active,
    help: 'Megabytes the audit log may reach before it is rotated.',
  }),
  flag({
    name: 'audit-log-compress',
    kind: 'bool',
    default: false,
    section,
    ...active,
    help: 'Compress rotated audit log files with gzip.',
  }),
  ...backendFlags('log', { mode: 'blocking', maxBatchSize: 1, maxBatchWaitMs: 0, throttle: false, throttleQps: 0, throttleBurst: 0 }),
  flag({
    name: 'audit-webhook-config-file',
    kind: 'string',
    default: '',
    section,
    ...active,
    help: 'Kubeconfig-format file that says where and how audit events are sent to a webhook. Setting it turns the webhook backend on.',
  }),
  flag({
    name: 'audit-webhook-initial-backoff',
    kind: 'duration',
    default: 10_000,
    section,
    ...active,
    help: 'Wait before the first retry of a failed webhook request; each later wait is half as long again, five attempts in all.',
  }),
  ...backendFlags('webhook', { mode: 'batch', maxBatchSize: 400, maxBatchWaitMs: 30_000, throttle: true, throttleQps: 10, throttleBurst: 15 }),
] as const
