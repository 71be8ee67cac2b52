/**
 * The `apiserver` daemon: flags -> PKI -> core -> TLS listener, and the
 * shutdown path (stop listening, end watches, exit 0 within seconds).
 * It is written against the node:* standard library, which Node, Bun and
 * Deno all provide; what differs between them comes in as a DaemonRuntime
 * (daemon-runtime.ts) from each runtime's entry (main.ts here,
 * runtimes/bun/main.ts, runtimes/deno/main.ts), which only wire that, the
 * process signals and the exit code to runDaemon.
 */
import type { DestinationStream } from 'pino'
import { type ApiServer, createApiServer } from '../../../core/index.js'
import { RuntimeConfigError } from '../../../core/resources/runtime-config.js'
import type { ApiServerOptions } from '../../../core/options/api-server-options.js'
import { localHost } from '../../../core/options/apply-flags.js'
import { flagSpec, type ParsedFlags, startupWarnings, unenforcedSecurityFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { ExternalJwtSigner, ServerPorts, StartupTemplateFiles } from '../../../core/ports.js'
import { ExternalSignerError } from '../../../core/authn/serviceaccount/external-signer.js'
import { useSha256Hex } from '../../../core/authn/constant-time.js'
import { nativeSha256Hex } from '../adapter/native-sha256.js'
import { nodeGzipStream } from '../adapter/gzip-stream.js'
import { serverUrl } from '../../../core/pki/kubeconfig.js'
import { daemonAdmission } from './admission.js'
import { egressProxies } from '../../../core/config/egress-selector.js'
import { closeEgressDialers, type EgressDialers, egressDialers } from '../adapter/egress-dialer.js'
import type { NodeTracing } from './tracing.js'
import { nodeRuntimeMetrics } from './metrics.js'
import { watchAuthorizationConfig } from './authorization.js'
import { readClientCABundles, watchClientCAFiles } from './client-ca-files.js'
import type { ClientCABundles } from '../adapter/client-cas.js'
import { watchAuthenticationConfig } from './authentication-config-watch.js'
import { gracefulShutdown } from '../../../core/lifecycle/shutdown.js'
import { type ConfigFiles, ConfigFilesError, loadConfigFiles } from './config-files.js'
import type { EncryptionAtRest } from '../../../core/encryption/encryption-at-rest.js'
import { watchEncryptionConfig } from './encryption-config-watch.js'
import { type DebugSocket, serveDebugSocket } from './debug-socket.js'
import { type DaemonFlags, FlagError, helpText, parseFlags } from './flags.js'
import { pkiOptionsOf, preparePki } from './pki.js'
import { serviceAccountKeyOptionsOf, serviceAccountKeys } from './service-account-keys.js'
import { type NodeProfiler, nodeProfiler } from './profiler.js'
import { type FetchHandler, serveTls, type TlsListener } from '../adapter/serve.js'
import { type ServerToCome, serverToCome } from './server-to-come.js'
import { reusePortWorks } from '../adapter/reuse-port.js'
import { type ListenerTls, servingTls } from './serving-tls.js'
import { checkProxyableHost, nodeAgentOptions } from './node-agent.js'
import { type DaemonStorage, openDaemonStorage, StorageStartupError } from '../storage/open.js'
import { multiServerOptions, peerProxyOptions } from './multi-server.js'
import { runPrimary } from './primary.js'
import { type ServingWorker, servingWorker } from './workers.js'
import { nodeWebhookClient } from './webhook-client.js'
import { nodeYamlDecoder } from './yaml-decoder.js'
import { daemonComponentProbes } from './component-probes.js'
import { beginDaemonStartup } from './startup-template.js'
import type { DaemonRuntime } from './daemon-runtime.js'
import { type NodeProxyTransport, nodeProxyTransport } from './proxy-transport.js'
import { daemonLogger, loggingOptions, logsHandlerPort, servedPaths } from './logging.js'
import {
  aggregationOptions,
  auditing,
  authenticationOptions,
  authorization,
  encryptionAtRest,
  loadTokens,
  metricsFilterOptions,
  StartupError,
} from './daemon-options.js'

/** How long shutdown may take before the daemon gives up waiting and exits. */
const SHUTDOWN_DEADLINE_MS = 5000
/** A worker's exit after its shutdown deadline: the process's own end, beyond the shutdown's. */
const WORKER_EXIT_MARGIN_MS = 2000
/** How long after serving the process metrics' collectors start, when no scrape started them earlier. */
const PROCESS_METRICS_DELAY_MS = 2000
/** How long after serving a first start keeps its start-up template: off the path of the first requests. */
const TEMPLATE_KEEP_DELAY_MS = 1000
/** How long shutdown waits for a start-up template not kept yet. */
const TEMPLATE_KEEP_AT_SHUTDOWN_MS = 2000

export interface DaemonListening {
  url: string
  port: number
  /** Absent when the client CA is the user's and no admin credential could be minted. */
  kubeconfigPath?: string
}

export interface DaemonIO {
  stdout(text: string): void
  stderr(text: string): void
  /** Aborting it shuts the daemon down as SIGTERM does. */
  stop?: AbortSignal
  /** Where pino's own JSON log lines go, whatever --logging-format says (embedders, tests). @default stderr, in the flags' format */
  logStream?: DestinationStream
  /** @default core's createApiServer */
  createServer?(options: ApiServerOptions, ports: Partial<ServerPorts>): ApiServer
  onListening?(info: DaemonListening): void
  /** What the runtime supplies (its SQLite driver). @default Node's, loaded only when none is given */
  runtime?: DaemonRuntime
  /** Where start-up templates are kept (runtimes/node/daemon/startup-template.ts). @default none: an empty store is bootstrapped object by object */
  startupTemplates?: StartupTemplateFiles
}

const processIO: DaemonIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

/**
 * SIGTERM and SIGINT as an AbortSignal; a second one exits at once with
 * status 1, as upstream does. A worker of `--workers` also shuts down when
 * the primary passes its signal on, which does not count as a second one
 * when the terminal sent the same signal to the worker too.
 */
function processSignals(logger: Logger, worker: ServingWorker | undefined): AbortSignal {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) return controller.abort(signal)
    logger.warn({ signal }, 'second signal: exiting without finishing the shutdown')
    process.exit(1)
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal)
  const fromPrimary = worker?.shutdownRequested
  if (fromPrimary) {
    const onRequest = (): void => {
      if (!controller.signal.aborted) controller.abort(fromPrimary.reason)
    }
    if (fromPrimary.aborted) onRequest()
    else fromPrimary.addEventListener('abort', onRequest, { once: true })
  }
  return controller.signal
}


/** One warning per flag given that is not yet in effect or is deprecated. */
function warnAboutFlags(parsed: ParsedFlags, logger: Logger): void {
  for (const warning of startupWarnings(parsed)) logger.warn({}, warning)
}

/** How many requests may wait for start-up: as many as the server runs at once (a limit lifted with 0 counts as its default). */
function requestsWaitingForStartup(parsed: ParsedFlags): number {
  const limit = (name: 'max-requests-inflight' | 'max-mutating-requests-inflight'): number => parsed.values[name] || (flagSpec(name).default as number)
  return limit('max-requests-inflight') + limit('max-mutating-requests-inflight')
}

/** "All interfaces and address families" for an unspecified bind address: `::` is dual-stack where IPv6 exists. */
async function listen(
  server: FetchHandler,
  flags: DaemonFlags,
  tls: { key: string; cert: string; egressDialers?: EgressDialers } & ClientCABundles & ListenerTls,
  logger: Logger,
): Promise<TlsListener> {
  const base = {
    port: flags.securePort,
    ...tls,
    http2: !flags.disableHttp2Serving,
    reusePort: flags.listener.permitPortSharing,
    maxConnectionBytesPerSec: flags.maxConnectionBytesPerSec,
    logger,
  }
  const unspecified = flags.bindAddress === '0.0.0.0' || flags.bindAddress === '::'
  if (!unspecified) return serveTls(server, { ...base, host: flags.bindAddress })
  try {
    return await serveTls(server, { ...base, host: '::' })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw err
    return serveTls(server, { ...base, host: '0.0.0.0' })
  }
}


/** The runtime the entry gave, else Node's: imported here, never statically, so other runtimes' builds do not load libsql. */
async function daemonRuntime(io: Partial<DaemonIO>): Promise<DaemonRuntime> {
  return io.runtime ?? (await import('./node-runtime.js')).nodeRuntime
}

/** The flags given that this runtime cannot enforce (DaemonRuntime.unenforcedFlags), one problem each. */
function flagsTheRuntimeCannotEnforce(parsed: ParsedFlags, runtime: DaemonRuntime): string[] {
  return [...parsed.set].flatMap((name) => {
    const reason = runtime.unenforcedFlags?.[name]
    if (!reason) return []
    return [`--${parsed.spelled.get(name) ?? name}: not enforced under ${runtime.name} ${runtime.version} (${reason}); refusing to start rather than ignore a security setting`]
  })
}

/**
 * `--permit-port-sharing` on a runtime whose listen() drops SO_REUSEPORT
 * stops start-up, as upstream's does where port reuse is unsupported:
 * binding exclusively instead would only show up later, as the next
 * server's "address already in use" in the middle of a rolling restart.
 */
async function portSharingProblems(flags: DaemonFlags, runtime: DaemonRuntime): Promise<string[]> {
  if (!flags.listener.permitPortSharing || (await reusePortWorks())) return []
  return [
    `--permit-port-sharing: ${runtime.name} ${runtime.version} cannot bind with SO_REUSEPORT on this platform (on Linux, Bun, Deno, and Node 22.12 or later can); refusing to start rather than bind the port exclusively`,
  ]
}

/**
 * How long the primary of `--workers` waits for its workers' shutdown: each
 * worker's own phases and its deadline for closing, and a little for the
 * process to exit.
 */
function workersShutdownDeadline(flags: DaemonFlags): number {
  return flags.shutdown.delayMs + flags.shutdown.watchTerminationGraceMs + SHUTDOWN_DEADLINE_MS + WORKER_EXIT_MARGIN_MS
}

/** Runs the daemon until `io.stop` aborts; resolves with the process exit code. */
export async function runDaemon(argv: string[], io: Partial<DaemonIO> = {}): Promise<number> {
  const out = { ...processIO, ...io }
  let command: ReturnType<typeof parseFlags>
  try {
    command = parseFlags(argv)
  } catch (err) {
    if (!(err instanceof FlagError)) throw err
    out.stderr(`${err.problems.map((p) => `Error: ${p}\n`).join('')}Run 'apiserver --help' for usage.\n`)
    return 1
  }
  if (command.action === 'help') {
    out.stdout(helpText())
    return 0
  }
  if (command.action === 'version') {
    const runtime = command.raw ? await daemonRuntime(out) : undefined
    out.stdout(
      runtime
        ? `${JSON.stringify({ gitVersion: command.version, platform: `${process.platform}/${process.arch}`, nodeVersion: process.version, runtime: `${runtime.name} ${runtime.version}` })}\n`
        : `Kubernetes ${command.version}\n`,
    )
    return 0
  }
  const { flags, options: fromFlags, parsed } = command
  const logging = daemonLogger(loggingOptions(parsed.values), out.logStream)
  const logger: Logger = logging.logger
  const worker = servingWorker()
  if (parsed.values['workers'] > 1 && !worker) {
    warnAboutFlags(parsed, logger)
    const code = await runPrimary({ flags, parsed, logger, shutdownDeadlineMs: workersShutdownDeadline(flags) }).catch((err: unknown) => {
      if (!(err instanceof StartupError)) throw err
      out.stderr(err.problems.map((p) => `Error: ${p}\n`).join(''))
      return 1
    })
    logging.close()
    return code
  }

  let server: ApiServer | undefined
  let listener: TlsListener | undefined
  let toCome: ServerToCome | undefined
  let servingAt!: DaemonListening
  let storage: DaemonStorage | undefined
  let stopWatchingAuthorization = () => {}
  let stopWatchingCAs = (): void => {}
  let stopWatchingAuthentication = (): void => {}
  let stopWatchingEncryption = (): void => {}
  let stopWatchingCertificates = () => {}
  let debugSocket: DebugSocket | undefined
  let profiler: NodeProfiler | undefined
  let externalSigner: ExternalJwtSigner | undefined
  let proxyTransport: NodeProxyTransport | undefined
  // Started at the first large YAML body.
  const yamlDecoder = nodeYamlDecoder({ logger })
  let dialers: EgressDialers | undefined
  let valueTransformers: EncryptionAtRest | undefined
  let tracing: NodeTracing | undefined
  let processMetricsTimer: ReturnType<typeof setTimeout> | undefined
  let templateTimer: ReturnType<typeof setTimeout> | undefined
  // A first start's start-up template, kept once: a while after serving, or at shutdown if that comes first.
  let keepTemplate: () => Promise<void> = async () => {}
  try {
    // The primary of --workers warned already.
    if (!worker) warnAboutFlags(parsed, logger)
    let files: ConfigFiles
    try {
      files = loadConfigFiles(parsed, logger)
    } catch (err) {
      if (err instanceof ConfigFilesError) throw new StartupError(...err.problems)
      throw err
    }
    const runtime = await daemonRuntime(out)
    // Bearer tokens are digested on every request they come with: the runtime's SHA-256 rather than core's JavaScript one.
    if (nativeSha256Hex) useSha256Hex(nativeSha256Hex)
    const unenforced = [...unenforcedSecurityFlags(parsed), ...flagsTheRuntimeCannotEnforce(parsed, runtime), ...(await portSharingProblems(flags, runtime))]
    if (unenforced.length > 0) throw new StartupError(...unenforced)
    const admission = daemonAdmission(parsed, files.admission)
    if (admission.problems.length > 0) throw new StartupError(...admission.problems)
    if (admission.notImplementedDefaults.length > 0)
      logger.warn(
        { plugins: admission.notImplementedDefaults },
        `admission plugins on by default that this server does not implement yet, so they do not run: ${admission.notImplementedDefaults.join(', ')}`,
      )
    const tokens = flags.tokenAuthFile ? await loadTokens(flags.tokenAuthFile, logger) : []
    const authz = authorization(files, parsed)
    // The proxies of --egress-selector-config-file; a TLS file that cannot be read stops start-up.
    dialers = await egressDialers(egressProxies(files.egressSelector)).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    const audit = auditing(parsed, files, logger, dialers)
    const pki = await preparePki(pkiOptionsOf(flags, logger)).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    const endpoint = flags.serviceAccounts.signingEndpoint
    // With an external signer, no key is read or made here: the signer holds them all.
    // The gRPC clients (signer, KMS plugins, OTLP) are loaded only when configured: a plain start does without them.
    externalSigner = endpoint ? (await import('./external-jwt-signer.js')).externalJwtSigner(endpoint) : undefined
    const saKeys = externalSigner
      ? { externalSigner }
      : await serviceAccountKeys(serviceAccountKeyOptionsOf(flags, pki.serving.privateKey, logger)).catch((err: Error) => {
          throw new StartupError(err.message)
        })
    const caFiles = {
      ...(flags.clientCaFile ? { clientCaFile: flags.clientCaFile } : {}),
      ...(flags.requestHeader.clientCaFile ? { requestHeaderCaFile: flags.requestHeader.clientCaFile } : {}),
      fallbackClientCA: pki.clientCA,
    }
    const cas = await readClientCABundles(caFiles).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    let tls: ReturnType<typeof servingTls>
    try {
      // SNI certificates verify client certificates against the same bundles as the default one.
      tls = servingTls(flags, [cas.clientCA, cas.requestHeaderCA].filter((pem) => pem !== undefined).join('\n'), logger)
    } catch (err) {
      throw new StartupError((err as Error).message)
    }
    const listenerTls = { key: pki.serving.privateKey, cert: pki.serving.certificate, ...cas, ...tls.listenerOptions, egressDialers: dialers }
    const listenOn = (handler: FetchHandler) =>
      listen(handler, flags, listenerTls, logger).catch((err: Error) => {
        throw new StartupError(`cannot listen on ${serverUrl(flags.bindAddress, flags.securePort)}: ${err.message}`)
      })
    // Listening now, while the store opens and start-up writes: see server-to-come.ts. A worker of --workers
    // listens once ready instead, so that the port's other workers take its share of connections meanwhile.
    if (!worker) {
      toCome = serverToCome(requestsWaitingForStartup(parsed))
      listener = await listenOn(toCome)
    }
    if (files.encryption) {
      const { nodeKmsClients } = await import('./kms-clients.js')
      valueTransformers = encryptionAtRest(files.encryption, nodeKmsClients, parsed.values['encryption-provider-config-automatic-reload'])
    }
    const transformers = valueTransformers
    // The workers of --workers share the embedded store's file, and tell each other of their commits.
    const sharing = worker && { committed: () => worker.storeChanged(), onOthersCommitted: (listener: () => void) => worker.onStoreChanged(listener) }
    storage = await openDaemonStorage(parsed.values, logger, transformers && ((key) => transformers.forKey(key)), (path) => runtime.openSqlite(path), sharing).catch((err: Error) => {
      throw err instanceof StorageStartupError ? new StartupError(err.message) : err
    })
    logger.info({}, `objects are stored in ${storage.description}`)
    const startup = await beginDaemonStartup(storage, parsed.values, { files: out.startupTemplates, logger, worker: worker !== undefined })
    // Heap sampling runs from start-up only where a profile can be asked for.
    profiler = await nodeProfiler({ sampleHeap: (fromFlags.serving?.profiling ?? true) || flags.debugSocketPath !== undefined })
    const aggregation = await aggregationOptions(fromFlags.aggregation, parsed)
    const peerProxy = await peerProxyOptions(parsed.values, aggregation.proxyClientCertificate).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    const nodeAgent = await nodeAgentOptions({
      certificateAuthority: parsed.values['nodeagent-certificate-authority'],
      clientCertificate: parsed.values['nodeagent-client-certificate'],
      clientKey: parsed.values['nodeagent-client-key'],
      preferredAddressTypes: parsed.values['nodeagent-preferred-address-types'],
      timeoutMs: parsed.values['nodeagent-timeout'],
      maxBytesPerSec: parsed.values['max-connection-bytes-per-sec'],
    }).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    if (!nodeAgent.caBundle)
      logger.warn({}, 'no --nodeagent-certificate-authority: node agents\' serving certificates are not verified (as upstream without --kubelet-certificate-authority)')
    proxyTransport = nodeProxyTransport(dialers)
    if (files.tracing) tracing = (await import('./tracing.js')).startNodeTracing(files.tracing)
    const metricsOptions = await metricsFilterOptions(fromFlags.metrics ?? {}, parsed)
    const runtimeMetrics = nodeRuntimeMetrics(metricsOptions.disabled)
    try {
      const options: ApiServerOptions = {
        ...fromFlags,
        authentication: authenticationOptions(fromFlags.authentication ?? {}, { parsed, files, tokens, cas, saKeys }),
        aggregation,
        ...(audit ? { audit } : {}),
        ...authz,
        nodeAgent,
        // kube-controller-manager without --root-ca-file publishes its kubeconfig's CA: the one that verifies this server.
        rootCA: pki.servingCA,
        admission: admission.options,
        multiServer: { ...multiServerOptions(parsed.values, worker?.instance), ...(peerProxy ? { peerProxy } : {}) },
        metrics: metricsOptions,
        // A port chosen at listen time (--secure-port=0) is known already when the listener opened early.
        ...(listener ? { securePort: listener.port } : {}),
      }
      server = (out.createServer ?? createApiServer)(options, {
        logger,
        storage: storage.storage,
        storageFactory: startup.factory,
        startupStored: startup.whole,
        storageHealth: storage,
        storageSizes: storage.sizes,
        ...(transformers ? { valueTransformers: transformers } : {}),
        webhookClient: nodeWebhookClient(dialers),
        yamlDecoder,
        gzipStream: nodeGzipStream,
        proxyTransport,
        checkProxyable: checkProxyableHost,
        profiler,
        ...logsHandlerPort(parsed.values),
        ...(tracing ? { tracerProvider: tracing.tracerProvider } : {}),
        runtimeMetrics,
        componentProbes: daemonComponentProbes(storage.clusterChecks),
      })
    } catch (err) {
      if (err instanceof RuntimeConfigError) throw new StartupError(`--runtime-config: ${err.message}`)
      throw err
    }
    await server.ready.catch((err: unknown) => {
      // The signer unreachable or its bounds at odds with the flags: a start-up error naming it, as upstream.
      throw err instanceof ExternalSignerError ? new StartupError(err.message) : err
    })
    // Before listening, what the store holds is start-up's alone: a template is read at this revision, once serving.
    const keepLater = await startup.startupDone()
    // A start whose hooks were refused a write keeps no template: a later start from it would skip them.
    const keep = server.fixedObjectsWritten() ? keepLater : async () => {}
    let kept: Promise<void> | undefined
    keepTemplate = () => (kept ??= keep())
    const configPath = parsed.values['authorization-config']
    if (configPath) {
      const running = server
      stopWatchingAuthorization = watchAuthorizationConfig(configPath, (authorizers) => running.reloadAuthorization(authorizers), logger)
    }
    const authenticationConfig = parsed.values['authentication-config']
    if (authenticationConfig) stopWatchingAuthentication = watchAuthenticationConfig(authenticationConfig, server, parsed, logger)
    const encryptionConfig = parsed.values['encryption-provider-config']
    if (transformers && encryptionConfig && parsed.values['encryption-provider-config-automatic-reload']) {
      stopWatchingEncryption = watchEncryptionConfig(encryptionConfig, transformers, parsed.values, logger)
    }
    listener ??= await listenOn(server)
    const listening = listener
    const serving = server
    stopWatchingCAs = watchClientCAFiles(
      caFiles,
      (bundles) => {
        listening.setClientCAs(bundles)
        // Extension servers learn of the rotation from kube-system/extension-apiserver-authentication.
        serving.updateClientCAs(bundles).catch((err: unknown) =>
          logger.warn({ err: String(err) }, 'cannot publish the rotated CA bundles in the extension-apiserver-authentication ConfigMap'),
        )
      },
      logger,
    )
    stopWatchingCertificates = tls.watch(listener)
    if (flags.debugSocketPath) {
      const path = flags.debugSocketPath
      debugSocket = await serveDebugSocket(path, profiler, (level) => logger.setVerbosity?.(level)).catch((err: Error) => {
        throw new StartupError(`--debug-socket-path: cannot listen on ${path}: ${err.message}`)
      })
    }
    // A port chosen at listen time (--secure-port=0) by a listener opened only now.
    if (!toCome && listener.port !== flags.securePort) await server.setSecurePort(listener.port)
    const url = serverUrl(localHost(flags.bindAddress), listener.port)
    // Under --workers the primary writes the kubeconfig, once, and says where the port serves.
    if (worker) worker.reportListening(url, listener.port)
    const kubeconfigPath = worker ? undefined : await pki.writeKubeconfig(url)
    if (worker) logger.info({ url, port: listener.port, worker: worker.index }, `worker ${worker.index} serving on ${url}`)
    else logger.info(
      { url, port: listener.port, bindAddress: flags.bindAddress, kubeconfig: kubeconfigPath ?? null, paths: servedPaths(parsed.values) },
      kubeconfigPath
        ? `Serving on ${url} (HTTP/2 and HTTP/1.1). Try: kubectl --kubeconfig ${kubeconfigPath} get ns`
        : `Serving on ${url} (HTTP/2 and HTTP/1.1). Client certificates are verified against --client-ca-file.`,
    )
    servingAt = { url, port: listener.port, ...(kubeconfigPath ? { kubeconfigPath } : {}) }
    // The process collectors start a little after serving (or at the first scrape): loading prom-client
    // right away would hold up the first /readyz probes, which arrive just then.
    processMetricsTimer = setTimeout(() => void runtimeMetrics.start().catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot start the process metrics')), PROCESS_METRICS_DELAY_MS).unref()
    templateTimer = setTimeout(() => void keepTemplate(), TEMPLATE_KEEP_DELAY_MS).unref()
  } catch (err) {
    toCome?.refuse()
    stopWatchingAuthorization()
    stopWatchingCAs()
    stopWatchingAuthentication()
    stopWatchingEncryption()
    await Promise.allSettled([listener?.close(), server?.shutdown()])
    stopWatchingCertificates()
    await Promise.allSettled([listener?.close(), server?.shutdown(), debugSocket?.close()])
    profiler?.close()
    await storage?.close().catch(() => {})
    valueTransformers?.close()
    externalSigner?.close?.()
    proxyTransport?.close()
    closeEgressDialers(dialers)
    await yamlDecoder.close()
    await tracing?.shutdown().catch(() => {})
    if (!(err instanceof StartupError)) throw err
    out.stderr(err.problems.map((p) => `Error: ${p}\n`).join(''))
    logging.close()
    return 1
  }

  const stop = out.stop ?? processSignals(logger, worker)
  // Only now, with the signals taken: a harness that saw an answer may stop the server at once.
  toCome?.serve(server)
  // After the requests that waited are under way: the entry's work on serving (V8's compilers let go) would hold them up.
  out.onListening?.(servingAt)
  await new Promise<void>((resolve) => {
    if (stop.aborted) return resolve()
    stop.addEventListener('abort', () => resolve(), { once: true })
  })
  logger.info({ reason: String(stop.reason) }, 'shutting down')
  clearTimeout(processMetricsTimer)
  clearTimeout(templateTimer)
  // Not kept yet: now, unless the store is too slow to answer (a template is an optimisation, shutdown is not).
  await Promise.race([keepTemplate(), new Promise((resolve) => setTimeout(resolve, TEMPLATE_KEEP_AT_SHUTDOWN_MS).unref())])
  await gracefulShutdown(server.lifecycle, flags.shutdown, listener, logger)
  stopWatchingAuthorization()
  stopWatchingCAs()
  stopWatchingAuthentication()
  stopWatchingEncryption()
  stopWatchingCertificates()
  const openStorage = storage
  const openTransport = proxyTransport
  const openDialers = dialers
  const openTransformers = valueTransformers
  const done = Promise.allSettled([listener.close(), server.shutdown(), debugSocket?.close()])
    .then(() => profiler?.close())
    .then(() => openTransport?.close())
    .then(() => yamlDecoder.close())
    .then(() => closeEgressDialers(openDialers))
    .then(() => openStorage.close())
    .then(() => openTransformers?.close())
    // The spans of the last requests leave before the process does.
    .then(() => tracing?.shutdown())
    .catch((err: unknown) => logger.warn({ err: String(err) }, 'closing the storage failed'))
    .then(() => 'done' as const)
  externalSigner?.close?.()
  const deadline = new Promise<'deadline'>((resolve) => setTimeout(resolve, SHUTDOWN_DEADLINE_MS, 'deadline').unref())
  if ((await Promise.race([done, deadline])) === 'deadline') logger.warn({}, 'shutdown did not finish in time; exiting anyway')
  else logger.info({}, 'stopped')
  logging.close()
  return 0
}
