/**
 * What core needs from the outside world, supplied by each runtime
 * (docs/architecture.md). Core only calls these; `runtimes/*` build them.
 */
import type { TracerProvider } from '@opentelemetry/api'
import type { AdmissionChain } from './admission/chain.js'
import type { WebhookClient } from './crd/webhook-client.js'
import type { SampledProfile } from './encoding/pprof.js'
import type { YamlDecoder } from './http/yaml-off-thread.js'
import type { GzipStream } from './http/filters/compression.js'
import type { StorageSizes } from './metrics/storage-size.js'
import type { ProxyTransport } from './proxy/transport.js'
import type { PassUpgrade } from './proxy/upgrade.js'
import type { StorageFactory } from './storage/factory.js'
import type { Storage } from './storage/interface.js'
import type { StartupTemplateFiles } from './storage/stored-startup-template.js'
import type { KeyTransformers } from './storage/value/key-transformers.js'
import type { KmsClientFactory } from './encryption/kms/client.js'
import type { Logger } from './logging/logger.js'
import type { ComponentProbe } from './resources/core/cluster-info.js'

export interface ServerPorts {
  /**
   * Where objects live: the server's revision and health come from it.
   * @default a new in-memory store
   */
  storage: Storage
  /**
   * The backend of each resource, asked once per resource with its group,
   * name and key prefix (`--kvstore-servers-overrides` routes here; the
   * watch cache goes in front of whatever it answers).
   * @default every resource in `storage`
   */
  storageFactory: StorageFactory
  /**
   * The value transformers (encryption at rest) that the backends given in
   * `storage` and `storageFactory` store through, each key's chosen by its
   * resource: the server tells it which resource every key prefix holds.
   * Build it from an EncryptionConfiguration with `encryptionKeyTransformers`.
   * @default built from `options.encryption` for the in-memory store; none otherwise
   */
  valueTransformers: KeyTransformers
  /**
   * The transport to the KMS plugins of `options.encryption` (gRPC on a unix
   * socket in the Node runtime: `nodeKmsClients`), when the server builds
   * the transformers itself; a `kms` provider without it is refused.
   * @default none
   */
  kmsClients: KmsClientFactory
  /**
   * Admission plugins of the embedder (upstream's MutationInterface and
   * ValidationInterface), run on every write after the server's own
   * (NamespaceLifecycle, the pod plugins), on the server's own writes too.
   * @default none
   */
  admission: AdmissionChain
  /** @default silent */
  logger: Logger
  /**
   * The server's clock: token expiry, --event-ttl, graceful deletion and
   * lease expiry compare against it. Tests pass `manualClock().now` and move
   * it with `advance` instead of waiting.
   * @default () => new Date()
   */
  now: () => Date
  /**
   * The storage's own health checks behind `/healthz/etcd` and `/readyz/etcd`,
   * each within its time-out (`--kvstore-healthcheck-timeout`,
   * `--kvstore-readycheck-timeout`). @default reading the current revision
   */
  storageHealth: { healthz(): Promise<void>; readyz(): Promise<void> }
  /**
   * The database size of each storage cluster (etcd's Maintenance status,
   * the embedded SQLite file), polled for `apiserver_storage_size_bytes`
   * every `options.storageSizePollMs`. @default none: the metric is absent
   */
  storageSizes?: StorageSizes
  /**
   * How the server calls webhooks (CRD conversion), trusting a webhook's
   * caBundle. @default fetch, which trusts only the runtime's own CAs
   */
  webhookClient: WebhookClient
  /**
   * Where large YAML request bodies are decoded: another thread, whose heap
   * keeps the yaml package's garbage (and its collections) off the serving
   * thread (`nodeYamlDecoder`: a worker). Answers are the same either way.
   * @default on the serving thread, in time slices
   */
  yamlDecoder: YamlDecoder
  /**
   * The gzip compressor of large answers (APIResponseCompression): Node's
   * zlib at upstream's level 1 in the Node runtime (`nodeGzipStream`).
   * @default the Web's CompressionStream, at its default level
   */
  gzipStream: GzipStream
  /**
   * How the server forwards requests to aggregated API servers: HTTPS that
   * trusts an APIService's caBundle and presents the proxy client
   * certificate. @default fetch, which can do neither (plain HTTP only)
   */
  proxyTransport: ProxyTransport
  /**
   * Refuses, with its reason, a host that nodes/proxy may not reach: the
   * runtime resolves a name and refuses any address that is not global
   * unicast, as upstream. @default IP literals judged alone, names refused
   */
  checkProxyable: (host: string) => Promise<void>
  /**
   * CPU and heap profiles behind `/debug/pprof/` (`--profiling`), served in
   * pprof's format: stacks and numbers, never the contents of memory.
   * @default none: `/debug/pprof/` is not served
   */
  profiler: Profiler
  /**
   * The runtime's log directory (`--enable-logs-handler`), served at `/logs/`
   * to users allowed to read it.
   * @default none: `/logs/` is not served
   */
  logFiles: LogFiles
  /**
   * Where the server's spans go (`--tracing-config-file`): a span per request
   * and one per storage write under it. The runtime builds the exporter and
   * the sampler; W3C `traceparent` is read by core.
   * @default none: no spans are started
   */
  tracerProvider: TracerProvider
  /**
   * The runtime's own metrics (the Node process's `process_*` and
   * `nodejs_*`), appended to `/metrics` in the same text format.
   * @default none: `/metrics` carries the server's metrics only
   */
  runtimeMetrics: RuntimeMetrics
  /**
   * The components `componentstatuses` reports, each checked when read
   * (upstream: the controller manager's and the scheduler's `/healthz` on
   * this host, and each etcd cluster). @default none: an empty list
   */
  componentProbes: readonly ComponentProbe[]
  /**
   * Where start-up templates (core/embedding/startup-template.ts) are kept
   * beyond this process: a process's first server with given options then
   * begins from what an earlier process's start-up stored, as later servers
   * in one process do. The Node entry point keeps them beside its script.
   * @default none: templates live as long as the process
   */
  startupTemplates: StartupTemplateFiles
  /**
   * The store was given, whole and with nothing written between, what a
   * start with the same settings and build stored (a start-up template
   * kept beside the script: core/storage/stored-startup-template.ts). The
   * post-start hooks that write fixed objects (the system priority
   * classes, priority and fairness's configuration, the RBAC policy) would
   * find everything as they leave it, and do not run.
   * @default false
   */
  startupStored: boolean
}


/** Metrics only the runtime knows, already in the Prometheus text format. */
export interface RuntimeMetrics {
  render(): Promise<string>
}

/** A directory of log files, read-only; paths are relative to it, `..` never reaches here. */
export interface LogFiles {
  /** The file or directory at `path` ('' is the directory itself); undefined when there is none or it lies outside. */
  read(path: string): Promise<LogFileEntry | undefined>
}

export type LogFileEntry =
  | { kind: 'file'; size: number; body: ReadableStream<Uint8Array> }
  /** Names sorted, directories with a trailing slash. */
  | { kind: 'directory'; entries: string[] }

/**
 * The runtime's own profilers, their samples handed over as stacks of
 * frames with numbers (core writes pprof's format from them). No method
 * may hand back anything read from the heap's contents.
 */
export interface Profiler {
  /**
   * Samples the CPU for `seconds`, or until `stop` aborts (the request
   * ended), then hands back `samples`/`count` and `cpu`/`nanoseconds` per
   * stack. One CPU profile runs at a time in a process, as in Go's runtime:
   * while one runs, another call throws `cpu profiling already in use`.
   */
  cpuProfile(seconds: number, stop?: AbortSignal): Promise<SampledProfile>
  /**
   * The sampled allocations of objects still live, per stack; with `gc`, after
   * a full collection. Undefined when the runtime has no sampling heap
   * profiler: `heapUnavailable` says why, and the heap profiles answer 501.
   */
  heapProfile?: (options: { gc: boolean }) => Promise<SampledProfile>
  heapUnavailable?: string
}

/**
 * What the transport knows about a request's connection. Runtime adapters
 * always pass one; a request handed to `fetch` without it comes from the
 * embedding program itself.
 */
export interface ConnectionInfo {
  /** The client certificate presented during the TLS handshake, if any. */
  clientCertificate?: ClientCertificate
  remoteAddress?: string
  /** The request's protocol as Go names it (`HTTP/1.1`, `HTTP/2.0`), for the handlers' spans. */
  protocol?: string
  /**
   * This request's header lines as the runtime read them (name, value,
   * name, value), for the identity headers that upstream reads one line at
   * a time (machinery/header-lines.ts). Set per request; absent where the
   * runtime has only fetch's joined Headers.
   */
  headerLines?: readonly string[]
  /**
   * The most bytes of request line and headers the listener lets through on
   * this connection, refusing more itself. Where that is within the
   * server's own bound (Go's 1 MiB), core does not count them again.
   */
  headerBytesLimit?: number
  /**
   * Present when the runtime can hand this request's connection to a backend
   * (an HTTP/1.1 upgrade: exec, attach, port-forward); core calls it once it
   * has checked the request, and the runtime ignores core's answer then.
   */
  passUpgrade?: PassUpgrade
}

export interface ClientCertificate {
  /** True when the TLS layer verified the chain against the client CA (`--client-ca-file`). */
  verified: boolean
  /**
   * True when the TLS layer verified the chain against the front-proxy CA
   * (`--requestheader-client-ca-file`): only then are identity headers trusted.
   * @default false
   */
  verifiedByRequestHeaderCA?: boolean
  /** Why verification failed, when it did. */
  verifyError?: string
  commonName: string
  organizations: string[]
}

/**
 * An external signer of service-account tokens
 * (`--service-account-signing-endpoint`; upstream's ExternalJWTSigner
 * v1alpha1 gRPC service on a unix socket). The runtime supplies the
 * transport; core checks every answer and keeps the keys fresh.
 */
export interface ExternalJwtSigner {
  /** Signs the base64url payload; answers the base64url header and signature. */
  sign(claims: string, timeoutMs: number): Promise<{ header: string; signature: string }>
  /** The public keys that verify the signer's tokens (PKIX DER), and when to ask again. */
  fetchKeys(timeoutMs: number): Promise<ExternalSignerKeys>
  /** What the signer supports: the longest token lifetime. */
  metadata(timeoutMs: number): Promise<{ maxTokenExpirationSeconds: number }>
  /** Closes the connection at shutdown. */
  close?(): void
}

export interface ExternalSignerKeys {
  keys: { keyId: string; key: Uint8Array; excludeFromOidcDiscovery: boolean }[]
  /** When the signer read the keys from its source of truth. */
  dataTimestamp?: Date
  refreshHintSeconds: number
}

/** Where start-up templates are kept: the runtimes build it. */
export type { StartupTemplateFiles }
