/**
 * The daemon's flags and config files mapped onto core's ApiServerOptions,
 * one function per concern (authentication, authorization, audit,
 * encryption, aggregation, metrics, the rest). Whatever the user can fix
 * stops start-up as a StartupError naming the flag or file; runDaemon
 * (daemon.ts) calls these in its boot sequence.
 */
import { readFile } from 'node:fs/promises'
import { parseTokenFile } from '../../../core/config/token-file.js'
import type { ApiServerOptions } from '../../../core/options/api-server-options.js'
import type { StaticToken } from '../../../core/config/token-file.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import type { ExternalJwtSigner } from '../../../core/ports.js'
import { auditOptions } from './audit.js'
import type { EgressDialers } from '../adapter/egress-dialer.js'
import { AuditWebhookConfigError } from './audit-webhook.js'
import { readAllowListManifest } from './metrics.js'
import type { MetricsFilterOptions } from '../../../core/metrics/filters.js'
import { authorizationOptions } from './authorization.js'
import type { ClientCABundles } from '../adapter/client-cas.js'
import { AuthenticationSetupError, jwtAndWebhookOptions } from './authentication-options.js'
import type { ConfigFiles } from './config-files.js'
import { type EncryptionAtRest, encryptionKeyTransformers } from '../../../core/encryption/encryption-at-rest.js'
import type { KmsClientFactory } from '../../../core/encryption/kms/client.js'
import { UnsupportedProviderError } from '../../../core/encryption/providers.js'
import type { DaemonFlags } from './flags.js'
import type { ServiceAccountKeys } from './service-account-keys.js'

/** Thrown for start-up problems the user can fix; each problem is printed as `Error: <problem>`. */
export class StartupError extends Error {
  readonly problems: readonly string[]
  constructor(...problems: string[]) {
    super(problems.join('\n'))
    this.problems = problems
  }
}

/** `--token-auth-file`: the static tokens, with the file's warnings logged. */
export async function loadTokens(path: string, logger: Logger): Promise<StaticToken[]> {
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

/** The transformers of `--encryption-provider-config`, built before anything is stored; a provider not in effect stops start-up. */
export function encryptionAtRest(config: ConfigFiles['encryption'], kms: KmsClientFactory, reload: boolean): EncryptionAtRest | undefined {
  if (!config) return undefined
  try {
    return encryptionKeyTransformers(config, { kms, reload })
  } catch (err) {
    if (err instanceof UnsupportedProviderError) throw new StartupError(`--encryption-provider-config: ${err.message}; refusing to start rather than store those resources unencrypted`)
    throw err
  }
}

/** The authorization options from the files the flags name; a webhook kubeconfig that cannot be used stops start-up. */
export function authorization(files: ConfigFiles, parsed: ParsedFlags): Partial<ApiServerOptions> {
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

export interface AuthenticationInputs {
  parsed: ParsedFlags
  files: ConfigFiles
  tokens: StaticToken[]
  cas: ClientCABundles
  /** The key files' keys, or the external signer that holds them. */
  saKeys: ServiceAccountKeys | { externalSigner: ExternalJwtSigner }
}

/** The audit backends the flags name; a webhook kubeconfig the backend cannot honour stops start-up. */
export function auditing(parsed: ParsedFlags, files: ConfigFiles, logger: Logger, dialers: EgressDialers): ApiServerOptions['audit'] {
  try {
    return auditOptions(parsed, files.auditPolicy, files.auditWebhook, logger, dialers)
  } catch (err) {
    if (err instanceof AuditWebhookConfigError) throw new StartupError(err.message)
    throw err
  }
}

/** Every authentication method the flags and the AuthenticationConfiguration file turn on. */
export function authenticationOptions(flags: DaemonFlags, { parsed, files, tokens, cas, saKeys }: AuthenticationInputs): ApiServerOptions['authentication'] {
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
export async function aggregationOptions(parsed: ParsedFlags): Promise<NonNullable<ApiServerOptions['aggregation']>> {
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

/** The rest of ApiServerOptions, straight from the parsed flags. */
export function serverOptions(
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
    ...(flags.controllers.length ? { controllers: flags.controllers } : {}),
    ...(flags.simulatedNodes > 0 ? { nodes: flags.simulatedNodes } : {}),
    deleteCollectionWorkers: flags.deleteCollectionWorkers,
    serving: flags.serving,
    // The address behind the cluster Service: the advertised one, else the bind address when it is one.
    advertiseAddress: flags.advertiseAddress ?? localHost(flags.bindAddress),
    ...(flags.externalHostname ? { externalHostname: flags.externalHostname } : {}),
    ...(flags.securePort ? { securePort: flags.securePort } : {}),
  }
}

/** `--disabled-metrics`, `--allow-metric-labels` (else its manifest) and `--show-hidden-metrics-for-version`. */
export async function metricsFilterOptions(parsed: ParsedFlags): Promise<MetricsFilterOptions> {
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

/** The host a local admin reaches the server at. */
export function localHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress
}
