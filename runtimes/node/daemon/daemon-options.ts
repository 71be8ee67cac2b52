/**
 * What the daemon loaded (files, keys, CA bundles, clients) added onto the
 * ApiServerOptions core made of the flags (core/options/apply-flags.ts), one
 * function per concern (authentication, authorization, audit, encryption,
 * aggregation, metrics). Whatever the user can fix stops start-up as a
 * StartupError naming the flag or file; runDaemon (daemon.ts) calls these in
 * its boot sequence.
 */
import { readFile } from 'node:fs/promises'
import { parseTokenFile } from '../../../core/config/token-file.js'
import type { ApiServerOptions } from '../../../core/options/api-server-options.js'
import type { AuthenticationOptions } from '../../../core/authn/authentication-options.js'
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
import { checkClientKeyPair } from './client-key-pair.js'
import type { ConfigFiles } from './config-files.js'
import { type EncryptionAtRest, encryptionKeyTransformers } from '../../../core/encryption/encryption-at-rest.js'
import type { KmsClientFactory } from '../../../core/encryption/kms/client.js'
import { UnsupportedProviderError } from '../../../core/encryption/providers.js'
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

/** The AuthenticationConfiguration file's `anonymous` section, which takes the place of `--anonymous-auth` (the two are exclusive). */
function anonymousFromFile(files: ConfigFiles): Pick<AuthenticationOptions, 'anonymous'> {
  const section = files.authentication?.anonymous
  if (!section) return {}
  return { anonymous: section.enabled ? { paths: section.conditions.map((c) => c.path) } : false }
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

/** The flags' authentication options with what the daemon loaded: the files' authenticators, static tokens, CA bundles and service-account keys. */
export function authenticationOptions(fromFlags: AuthenticationOptions, { parsed, files, tokens, cas, saKeys }: AuthenticationInputs): AuthenticationOptions {
  const { requestHeader, serviceAccounts, ...rest } = fromFlags
  let methods: ReturnType<typeof jwtAndWebhookOptions>
  try {
    methods = jwtAndWebhookOptions(parsed, files)
  } catch (err) {
    if (err instanceof AuthenticationSetupError) throw new StartupError(err.message)
    throw err
  }
  return {
    ...rest,
    ...methods,
    tokens,
    ...anonymousFromFile(files),
    ...(cas.clientCA ? { clientCA: cas.clientCA } : {}),
    // Without its CA the proxy's headers mean nothing, as upstream ignores the other --requestheader-* flags then.
    ...(cas.requestHeaderCA && requestHeader ? { requestHeader: { ...requestHeader, clientCA: cas.requestHeaderCA } } : {}),
    serviceAccounts: {
      ...(serviceAccounts || {}),
      ...('externalSigner' in saKeys ? { externalSigner: saKeys.externalSigner } : { signingKey: saKeys.signingKey, keys: saKeys.keys }),
    },
  }
}

/** The flags' aggregation options with the proxy client pair (`--proxy-client-cert-file`, `--proxy-client-key-file`) read from its files. */
export async function aggregationOptions(fromFlags: ApiServerOptions['aggregation'], parsed: ParsedFlags): Promise<NonNullable<ApiServerOptions['aggregation']>> {
  const values = parsed.values
  const certFile = values['proxy-client-cert-file']
  const keyFile = values['proxy-client-key-file']
  const read = (flag: string, path: string) =>
    readFile(path, 'utf8').catch((err: Error) => {
      throw new StartupError(`--${flag}: cannot read ${path}: ${err.message}`)
    })
  const pair = certFile && keyFile ? { certificate: await read('proxy-client-cert-file', certFile), key: await read('proxy-client-key-file', keyFile) } : undefined
  if (pair) {
    try {
      checkClientKeyPair(pair, { certificate: 'proxy-client-cert-file', key: 'proxy-client-key-file' })
    } catch (err) {
      throw new StartupError((err as Error).message)
    }
  }
  return { ...fromFlags, ...(pair ? { proxyClientCertificate: pair } : {}) }
}

/** The flags' metrics options, with the labels of `--allow-metric-labels-manifest` when `--allow-metric-labels` lists none. */
export async function metricsFilterOptions(fromFlags: MetricsFilterOptions, parsed: ParsedFlags): Promise<MetricsFilterOptions> {
  const manifest = parsed.values['allow-metric-labels-manifest']
  // As upstream, the flag's list wins over the manifest's.
  if (Object.keys(fromFlags.allowLabels ?? {}).length || !manifest) return fromFlags
  const allowLabels = await readAllowListManifest(manifest).catch((err: Error) => {
    throw new StartupError(err.message)
  })
  return { ...fromFlags, allowLabels }
}
