/**
 * The `apiserver` daemon: flags -> PKI -> core -> TLS listener, and the
 * shutdown path (stop listening, end watches, exit 0 within seconds).
 * It is written against the node:* standard library, which Node, Bun and
 * Deno all provide; what differs between them comes in as a DaemonRuntime
 * (daemon-runtime.ts) from each runtime's entry (main.ts here,
 * runtimes/bun/main.ts, runtimes/deno/main.ts), which only wire that, the
 * process signals and the exit code to runDaemon.
 */
import { readFile } from 'node:fs/promises'
import type { DestinationStream } from 'pino'
import { parseTokenFile } from '../../core/config/token-file.js'
import { type ApiServer, createApiServer } from '../../core/index.js'
import { RuntimeConfigError } from '../../core/resources/runtime-config.js'
import type { ApiServerOptions, StaticToken } from '../../core/options/api-server-options.js'
import { type ParsedFlags, startupWarnings, unenforcedSecurityFlags } from '../../core/options/flags/index.js'
import type { ExternalJwtSigner, Logger, ServerPorts } from '../../core/ports.js'
import { ExternalSignerError } from '../../core/authn/serviceaccount/external-signer.js'
import { serverUrl } from '../../core/pki/kubeconfig.js'
import { daemonAdmission } from './admission.js'
import { auditOptions } from './audit.js'
import { egressProxies } from '../../core/config/egress-selector.js'
import { closeEgressDialers, type EgressDialers, egressDialers } from './egress-dialer.js'
import { AuditWebhookConfigError } from './audit-webhook.js'
import type { NodeTracing } from './tracing.js'
import { nodeRuntimeMetrics, readAllowListManifest } from './metrics.js'
import type { MetricsFilterOptions } from '../../core/metrics/filters.js'
import { authorizationOptions, watchAuthorizationConfig } from './authorization.js'
import { readClientCABundles, watchClientCAFiles } from './client-ca-files.js'
import type { ClientCABundles } from './client-cas.js'
import { AuthenticationSetupError, jwtAndWebhookOptions } from './authentication-options.js'
import { watchAuthenticationConfig } from './authentication-config-watch.js'
import { gracefulShutdown } from '../../core/lifecycle/shutdown.js'
import { type ConfigFiles, ConfigFilesError, loadConfigFiles } from './config-files.js'
import { type EncryptionAtRest, encryptionKeyTransformers } from '../../core/encryption/encryption-at-rest.js'
import type { KmsClientFactory } from '../../core/encryption/kms/client.js'
import { watchEncryptionConfig } from './encryption-config-watch.js'
import { UnsupportedProviderError } from '../../core/encryption/providers.js'
import { type DebugSocket, serveDebugSocket } from './debug-socket.js'
import { type DaemonFlags, FlagError, helpText, parseFlags } from './flags.js'
import { preparePki } from './pki.js'
import { type ServiceAccountKeys, serviceAccountKeys } from './service-account-keys.js'
import { nodeProfiler } from './profiler.js'
import { serveTls, type TlsListener } from './serve.js'
import { reusePortWorks } from './reuse-port.js'
import { type ListenerTls, servingTls } from './serving-tls.js'
import { checkProxyableHost, nodeAgentOptions } from './node-agent.js'
import { type DaemonStorage, openDaemonStorage, StorageStartupError } from './storage/open.js'
import { eventExpiry, multiServerOptions, peerProxyOptions } from './multi-server.js'
import { nodeWebhookClient } from './webhook-client.js'
import type { DaemonRuntime } from './daemon-runtime.js'
import { type NodeProxyTransport, nodeProxyTransport } from './proxy-transport.js'
import { daemonLogger, loggingOptions, logsHandlerPort, servedPaths } from './logging.js'

/** How long shutdown may take before the daemon gives up waiting and exits. */
const SHUTDOWN_DEADLINE_MS = 5000
/** How long after serving the process metrics' collectors start, when no scrape started them earlier. */
const PROCESS_METRICS_DELAY_MS = 2000

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
}

const processIO: DaemonIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

/** SIGTERM and SIGINT as an AbortSignal; a second one exits at once with status 1, as upstream does. */
function processSignals(logger: Logger): AbortSignal {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) return controller.abort(signal)
    logger.warn({ signal }, 'second signal: exiting without finishing the shutdown')
    process.exit(1)
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal)
  return controller.signal
}

/** Thrown for start-up problems the user can fix; each problem is printed as `Error: <problem>`. */
class StartupError extends Error {
  readonly problems: readonly string[]
  constructor(...problems: string[]) {
    super(problems.join('\n'))
    this.problems = problems
  }
}

async function loadTokens(path: string, logger: Logger): Promise<StaticToken[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new StartupError(`--token-auth-file: cannot read ${path}: ${(err as Error).message}`)
  }
  try {
    return parseTokenFile(text, path, (w) => logger.warn({ file: path, line: w.line }, w.message))
  } catch (err) {
    throw new StartupError((err as Error).message)
  }
}

/** The authorization options from the files the flags name; a webhook kubeconfig that cannot be used stops start-up. */
/** The transformers of `--encryption-provider-config`, built before anything is stored; a provider not in effect stops start-up. */
function encryptionAtRest(config: ConfigFiles['encryption'], kms: KmsClientFactory, reload: boolean): EncryptionAtRest | undefined {
  if (!config) return undefined
  try {
    return encryptionKeyTransformers(config, { kms, reload })
  } catch (err) {
    if (err instanceof UnsupportedProviderError) throw new StartupError(`--encryption-provider-config: ${err.message}; refusing to start rather than store those resources unencrypted`)
    throw err
  }
}

function authorization(files: ConfigFiles, parsed: ParsedFlags): Partial<ApiServerOptions> {
  try {
    return authorizationOptions(files, parsed)
  } catch (err) {
    const flag = parsed.values['authorization-config'] ? '--authorization-config' : '--authorization-webhook-config-file'
    throw new StartupError(`${flag}: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** `--anonymous-auth`, unless the AuthenticationConfiguration file has its own `anonymous` section (the two are exclusive). */
function anonymousOption(flags: DaemonFlags, files: ConfigFiles): NonNullable<ApiServerOptions['authentication']>['anonymous'] {
  const section = files.authentication?.anonymous
  if (!section) return flags.anonymousAuth
  return section.enabled ? { paths: section.conditions.map((c) => c.path) } : false
}

interface AuthenticationInputs {
  parsed: ParsedFlags
  files: ConfigFiles
  tokens: StaticToken[]
  cas: ClientCABundles
  /** The key files' keys, or the external signer that holds them. */
  saKeys: ServiceAccountKeys | { externalSigner: ExternalJwtSigner }
}

/** The audit backends the flags name; a webhook kubeconfig the backend cannot honour stops start-up. */
function auditing(parsed: ParsedFlags, files: ConfigFiles, logger: Logger, dialers: EgressDialers): ApiServerOptions['audit'] {
  try {
    return auditOptions(parsed, files.auditPolicy, files.auditWebhook, logger, dialers)
  } catch (err) {
    if (err instanceof AuditWebhookConfigError) throw new StartupError(err.message)
    throw err
  }
}

function authenticationOptions(flags: DaemonFlags, { parsed, files, tokens, cas, saKeys }: AuthenticationInputs): ApiServerOptions['authentication'] {
  const { clientCaFile: _file, ...proxy } = flags.requestHeader
  const sa = flags.serviceAccounts
  let methods: ReturnType<typeof jwtAndWebhookOptions>
  try {
    methods = jwtAndWebhookOptions(parsed, files)
  } catch (err) {
    if (err instanceof AuthenticationSetupError) throw new StartupError(err.message)
    throw err
  }
  return {
    ...methods,
    clientCertificates: true,
    tokens,
    anonymous: anonymousOption(flags, files),
    ...(cas.clientCA ? { clientCA: cas.clientCA } : {}),
    // Without its CA the proxy's headers mean nothing, as upstream ignores the other --requestheader-* flags then.
    ...(cas.requestHeaderCA ? { requestHeader: { ...proxy, clientCA: cas.requestHeaderCA } } : {}),
    serviceAccounts: {
      ...(sa.issuers.length ? { issuers: sa.issuers } : {}),
      ...('externalSigner' in saKeys ? { externalSigner: saKeys.externalSigner } : { signingKey: saKeys.signingKey, keys: saKeys.keys }),
      maxExpirationSeconds: sa.maxExpirationSeconds,
      extendExpiration: sa.extendExpiration,
      lookup: sa.lookup,
      ...(sa.jwksUri ? { jwksUri: sa.jwksUri } : {}),
    },
    ...(flags.apiAudiences.length ? { apiAudiences: flags.apiAudiences } : {}),
    bootstrapTokens: flags.bootstrapTokens,
  }
}

/** `--enable-aggregator-routing`, `--aggregator-reject-forwarding-redirect` and the proxy client pair, read from its files. */
async function aggregationOptions(parsed: ParsedFlags): Promise<NonNullable<ApiServerOptions['aggregation']>> {
  const values = parsed.values
  const certFile = values['proxy-client-cert-file']
  const keyFile = values['proxy-client-key-file']
  const read = (flag: string, path: string) =>
    readFile(path, 'utf8').catch((err: Error) => {
      throw new StartupError(`--${flag}: cannot read ${path}: ${err.message}`)
    })
  const pair = certFile && keyFile ? { certificate: await read('proxy-client-cert-file', certFile), key: await read('proxy-client-key-file', keyFile) } : undefined
  return {
    enableAggregatorRouting: values['enable-aggregator-routing'],
    rejectForwardingRedirect: values['aggregator-reject-forwarding-redirect'],
    ...(pair ? { proxyClientCertificate: pair } : {}),
  }
}

function serverOptions(
  flags: DaemonFlags,
  authentication: ApiServerOptions['authentication'],
  authz: Partial<ApiServerOptions>,
  audit: ApiServerOptions['audit'],
  aggregation: ApiServerOptions['aggregation'],
): ApiServerOptions {
  return {
    authentication,
    ...(aggregation ? { aggregation } : {}),
    ...(audit ? { audit } : {}),
    authorizationModes: flags.authorizationModes,
    ...authz,
    // As upstream, whatever the authorizers: a later switch to RBAC finds the policy in place.
    bootstrapRbacPolicy: true,
    version: flags.version,
    ...(flags.emulation ? { emulation: flags.emulation } : {}),
    requestTimeoutMs: flags.requestTimeoutMs,
    minRequestTimeoutSeconds: flags.minRequestTimeoutSeconds,
    watchCache: flags.watchCache,
    watchCacheSizes: flags.watchCacheSizes,
    runtimeConfig: flags.runtimeConfig,
    storagePrefix: flags.storagePrefix,
    storageObjectCountPollMs: flags.storageObjectCountPollMs,
    storageSizePollMs: flags.storageSizePollMs,
    allowPrivileged: flags.allowPrivileged,
    serviceClusterIPRange: flags.serviceClusterIPRange,
    serviceNodePortRange: flags.serviceNodePortRange,
    platformServiceNodePort: flags.platformServiceNodePort,
    endpointReconcilerType: flags.endpointReconcilerType,
    garbageCollector: flags.garbageCollector,
    deleteCollectionWorkers: flags.deleteCollectionWorkers,
    serving: flags.serving,
    // The address behind the cluster Service: the advertised one, else the bind address when it is one.
    advertiseAddress: flags.advertiseAddress ?? localHost(flags.bindAddress),
    ...(flags.externalHostname ? { externalHostname: flags.externalHostname } : {}),
    ...(flags.securePort ? { securePort: flags.securePort } : {}),
  }
}

/** One warning per flag given that is not yet in effect or is deprecated. */
/** `--disabled-metrics`, `--allow-metric-labels` (else its manifest) and `--show-hidden-metrics-for-version`. */
async function metricsFilterOptions(parsed: ParsedFlags): Promise<MetricsFilterOptions> {
  const values = parsed.values
  const manifest = values['allow-metric-labels-manifest']
  const fromFlag = values['allow-metric-labels']
  // As upstream, the flag's list wins over the manifest's.
  const allowLabels = Object.keys(fromFlag).length || !manifest ? fromFlag : await readAllowListManifest(manifest).catch((err: Error) => {
    throw new StartupError(err.message)
  })
  return {
    disabled: values['disabled-metrics'],
    allowLabels,
    ...(values['show-hidden-metrics-for-version'] ? { showHiddenForVersion: values['show-hidden-metrics-for-version'] } : {}),
  }
}

function warnAboutFlags(parsed: ParsedFlags, logger: Logger): void {
  for (const warning of startupWarnings(parsed)) logger.warn({}, warning)
}

/** "All interfaces and address families" for an unspecified bind address: `::` is dual-stack where IPv6 exists. */
async function listen(
  server: ApiServer,
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

/** The host a local admin reaches the server at. */
function localHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress
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
  const { flags, parsed } = command
  const logging = daemonLogger(loggingOptions(parsed.values), out.logStream)
  const logger: Logger = logging.logger

  let server: ApiServer | undefined
  let listener: TlsListener | undefined
  let storage: DaemonStorage | undefined
  let stopWatchingAuthorization = () => {}
  let stopWatchingCAs = (): void => {}
  let stopWatchingAuthentication = (): void => {}
  let stopWatchingEncryption = (): void => {}
  let stopWatchingCertificates = () => {}
  let debugSocket: DebugSocket | undefined
  let externalSigner: ExternalJwtSigner | undefined
  let proxyTransport: NodeProxyTransport | undefined
  let dialers: EgressDialers | undefined
  let valueTransformers: EncryptionAtRest | undefined
  let tracing: NodeTracing | undefined
  let processMetricsTimer: ReturnType<typeof setTimeout> | undefined
  try {
    warnAboutFlags(parsed, logger)
    let files: ConfigFiles
    try {
      files = loadConfigFiles(parsed, logger)
    } catch (err) {
      if (err instanceof ConfigFilesError) throw new StartupError(...err.problems)
      throw err
    }
    const runtime = await daemonRuntime(out)
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
    const pki = await preparePki({
      certDir: flags.certDir,
      bindAddress: flags.bindAddress,
      ...(flags.advertiseAddress ? { advertiseAddress: flags.advertiseAddress } : {}),
      ...(flags.tlsCertFile && flags.tlsPrivateKeyFile ? { tlsCertFile: flags.tlsCertFile, tlsPrivateKeyFile: flags.tlsPrivateKeyFile } : {}),
      ...(flags.clientCaFile ? { clientCaFile: flags.clientCaFile } : {}),
      logger,
    }).catch((err: Error) => {
      throw new StartupError(err.message)
    })
    const endpoint = flags.serviceAccounts.signingEndpoint
    // With an external signer, no key is read or made here: the signer holds them all.
    // The gRPC clients (signer, KMS plugins, OTLP) are loaded only when configured: a plain start does without them.
    externalSigner = endpoint ? (await import('./external-jwt-signer.js')).externalJwtSigner(endpoint) : undefined
    const saKeys = externalSigner
      ? { externalSigner }
      : await serviceAccountKeys({
          certDir: flags.certDir,
          keyFiles: flags.serviceAccounts.keyFiles,
          ...(flags.serviceAccounts.signingKeyFile ? { signingKeyFile: flags.serviceAccounts.signingKeyFile } : {}),
          servingKey: pki.serving.privateKey,
          logger,
        }).catch((err: Error) => {
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
    if (files.encryption) {
      const { nodeKmsClients } = await import('./kms-clients.js')
      valueTransformers = encryptionAtRest(files.encryption, nodeKmsClients, parsed.values['encryption-provider-config-automatic-reload'])
    }
    const transformers = valueTransformers
    storage = await openDaemonStorage(parsed.values, logger, transformers && ((key) => transformers.forKey(key)), (path) => runtime.openSqlite(path)).catch((err: Error) => {
      throw err instanceof StorageStartupError ? new StartupError(err.message) : err
    })
    logger.info({}, `objects are stored in ${storage.description}`)
    const profiler = nodeProfiler()
    const aggregation = await aggregationOptions(parsed)
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
    const metricsOptions = await metricsFilterOptions(parsed)
    const runtimeMetrics = nodeRuntimeMetrics(metricsOptions.disabled)
    try {
      const options = serverOptions(flags, authenticationOptions(flags, { parsed, files, tokens, cas, saKeys }), authz, audit, aggregation)
      server = (out.createServer ?? createApiServer)({ ...options, nodeAgent, admission: admission.options, multiServer: { ...multiServerOptions(parsed.values), ...(peerProxy ? { peerProxy } : {}) }, ...eventExpiry(parsed.values), metrics: metricsOptions }, {
        logger,
        storage: storage.storage,
        storageFactory: storage.factory,
        storageHealth: storage,
        storageSizes: storage.sizes,
        ...(transformers ? { valueTransformers: transformers } : {}),
        webhookClient: nodeWebhookClient(dialers),
        proxyTransport,
        checkProxyable: checkProxyableHost,
        profiler,
        ...logsHandlerPort(parsed.values),
        ...(tracing ? { tracerProvider: tracing.tracerProvider } : {}),
        runtimeMetrics,
      })
    } catch (err) {
      if (err instanceof RuntimeConfigError) throw new StartupError(`--runtime-config: ${err.message}`)
      throw err
    }
    await server.ready.catch((err: unknown) => {
      // The signer unreachable or its bounds at odds with the flags: a start-up error naming it, as upstream.
      throw err instanceof ExternalSignerError ? new StartupError(err.message) : err
    })
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
    listener = await listen(server, flags, { key: pki.serving.privateKey, cert: pki.serving.certificate, ...cas, ...tls.listenerOptions, egressDialers: dialers }, logger).catch(
      (err: Error) => {
        throw new StartupError(`cannot listen on ${serverUrl(flags.bindAddress, flags.securePort)}: ${err.message}`)
      },
    )
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
      debugSocket = await serveDebugSocket(path, profiler).catch((err: Error) => {
        throw new StartupError(`--debug-socket-path: cannot listen on ${path}: ${err.message}`)
      })
    }
    // A port chosen at listen time (--secure-port=0) is known only now.
    if (listener.port !== flags.securePort) await server.setSecurePort(listener.port)
    const url = serverUrl(localHost(flags.bindAddress), listener.port)
    const kubeconfigPath = await pki.writeKubeconfig(url)
    logger.info(
      { url, port: listener.port, bindAddress: flags.bindAddress, kubeconfig: kubeconfigPath ?? null, paths: servedPaths(parsed.values) },
      kubeconfigPath
        ? `Serving on ${url} (HTTP/2 and HTTP/1.1). Try: kubectl --kubeconfig ${kubeconfigPath} get ns`
        : `Serving on ${url} (HTTP/2 and HTTP/1.1). Client certificates are verified against --client-ca-file.`,
    )
    out.onListening?.({ url, port: listener.port, ...(kubeconfigPath ? { kubeconfigPath } : {}) })
    // The process collectors start a little after serving (or at the first scrape): loading prom-client
    // right away would hold up the first /readyz probes, which arrive just then.
    processMetricsTimer = setTimeout(() => void runtimeMetrics.start().catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot start the process metrics')), PROCESS_METRICS_DELAY_MS).unref()
  } catch (err) {
    stopWatchingAuthorization()
    stopWatchingCAs()
    stopWatchingAuthentication()
    stopWatchingEncryption()
    await Promise.allSettled([listener?.close(), server?.shutdown()])
    stopWatchingCertificates()
    await Promise.allSettled([listener?.close(), server?.shutdown(), debugSocket?.close()])
    await storage?.close().catch(() => {})
    valueTransformers?.close()
    externalSigner?.close?.()
    proxyTransport?.close()
    closeEgressDialers(dialers)
    await tracing?.shutdown().catch(() => {})
    if (!(err instanceof StartupError)) throw err
    out.stderr(err.problems.map((p) => `Error: ${p}\n`).join(''))
    logging.close()
    return 1
  }

  const stop = out.stop ?? processSignals(logger)
  await new Promise<void>((resolve) => {
    if (stop.aborted) return resolve()
    stop.addEventListener('abort', () => resolve(), { once: true })
  })
  logger.info({ reason: String(stop.reason) }, 'shutting down')
  clearTimeout(processMetricsTimer)
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
    .then(() => openTransport?.close())
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
