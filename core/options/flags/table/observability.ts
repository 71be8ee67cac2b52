/**
 * Flags for looking inside the server (spec: "Runtime, metrics, logging,
 * diagnostics"): profiling and priority and fairness (upstream's "Features
 * flags"), metrics, logs and traces.
 */
import { flag } from '../spec.js'
import { NOT_YET } from './not-yet.js'

export const LOGGING_FORMATS = ['text', 'json'] as const

const logs = { section: 'Logs', status: 'active' } as const
const metrics = { section: 'Metrics', status: 'active' } as const

export const OBSERVABILITY_FLAGS = [
  flag({
    name: 'contention-profiling',
    kind: 'bool',
    default: false,
    section: 'Features',
    status: 'pending',
    pending: NOT_YET.contentionProfiling,
    help: 'Also profile blocking (lock contention), when --profiling is on. Accepted for compatibility: a Node server has no locks to contend for, and V8 offers no such profile.',
  }),
  flag({
    name: 'debug-socket-path',
    kind: 'string',
    default: '',
    section: 'Features',
    status: 'active',
    help: 'Unix socket that serves the profiling endpoints (/debug/pprof/) without authentication or authorization; the socket file is 0600 from the moment it exists.',
  }),
  flag({
    name: 'enable-priority-and-fairness',
    kind: 'bool',
    default: true,
    section: 'Features',
    status: 'active',
    help: 'Replace the max-in-flight limits with a handler that queues requests and dispatches them by priority and fairness.',
  }),
  flag({
    name: 'profiling',
    kind: 'bool',
    default: true,
    section: 'Features',
    status: 'active',
    help: 'Serve the profiling web interface at host:port/debug/pprof/, for users allowed to get those non-resource paths: profile?seconds=N (CPU), heap and allocs (sampled allocations of live objects), in pprof\'s format (go tool pprof reads them). Profiles hold stacks and counts, never memory contents; heap and allocs answer 501 where the runtime has no heap sampler (Bun).',
  }),
  flag({
    name: 'allow-metric-labels',
    kind: 'metricLabels',
    default: {},
    ...metrics,
    help: "Allowed values per metric label, as <MetricName>,<LabelName>=<value>,<value>..., e.g. \"metric1,label1='v1,v2,v3'\". Values outside the list are reported as 'unexpected'. Repeatable.",
  }),
  flag({
    name: 'allow-metric-labels-manifest',
    kind: 'string',
    default: '',
    ...metrics,
    help: 'File holding the same allow-list as --allow-metric-labels; the flag wins over the file.',
  }),
  flag({
    name: 'disabled-metrics',
    kind: 'strings',
    default: [],
    ...metrics,
    help: 'Fully qualified names of metrics to switch off, comma separated; wins over showing hidden metrics.',
  }),
  flag({
    name: 'show-hidden-metrics-for-version',
    kind: 'string',
    default: '',
    ...metrics,
    help: "Show the metrics hidden since this version, as <major>.<minor>, e.g. '1.31'. Only the minor release before the server's is allowed, so that metrics about to be removed are noticed a release ahead.",
  }),
  flag({
    name: 'log-flush-frequency',
    kind: 'duration',
    default: 5000,
    ...logs,
    help: 'Longest time buffered log lines wait before they are written (with --log-text-info-buffer-size); other lines are written at once.',
  }),
  flag({
    name: 'log-text-info-buffer-size',
    kind: 'quantity',
    default: 0,
    ...logs,
    help: '[Alpha] With split text output, buffer info messages up to this size: bytes (512), multiples of 1000 (1k, 3M, 4G) or of 1024 (2Ki, 5Mi, 6Gi). 0 means no buffering. Needs the LoggingAlphaOptions feature gate.',
  }),
  flag({
    name: 'log-text-split-stream',
    kind: 'bool',
    default: false,
    ...logs,
    help: '[Alpha] In text format, write errors to standard error and info messages to standard output. Needs the LoggingAlphaOptions feature gate.',
  }),
  flag({
    name: 'logging-format',
    kind: 'string',
    default: 'text',
    ...logs,
    help: `Log format. Permitted: ${LOGGING_FORMATS.map((f) => `"${f}"`).join(', ')}.`,
  }),
  flag({
    name: 'v',
    short: 'v',
    kind: 'level',
    default: 0,
    ...logs,
    help: 'Log verbosity level: messages logged at V(n) show when n is at most this; the request log is at 3.',
  }),
  flag({
    name: 'vmodule',
    kind: 'vmodule',
    default: [],
    ...logs,
    help: "Per-module verbosity, comma separated pattern=N settings: a module is a source file's base name without extension (httplog, authentication), a pattern a glob with * and ?; the first match applies. Text format only.",
  }),
  flag({
    name: 'tracing-config-file',
    kind: 'string',
    default: '',
    section: 'Traces',
    status: 'active',
    help: 'File of kind TracingConfiguration: the OTLP gRPC collector spans are sent to (endpoint, default localhost:4317, without TLS) and how many traces per million are sampled (samplingRatePerMillion; unset: only requests whose trusted parent was sampled).',
  }),
] as const
