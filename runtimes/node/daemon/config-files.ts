/**
 * Start-up reading of every file a flag points to: the five config file kinds,
 * the ABAC policy and the kubeconfig-format connection files. Each is read
 * and checked completely (core/config), so a bad file stops start-up with
 * every problem and its field path, before anything listens. Features that
 * are not built yet still get their files validated now.
 */
import { readFileSync, statSync } from 'node:fs'
import { type AbacPolicy, loadAbacPolicy } from '../../../core/config/abac-policy.js'
import { type AdmissionConfiguration, loadAdmissionConfiguration } from '../../../core/config/admission.js'
import {
  authenticationFlagConflicts,
  type LoadedAuthenticationConfiguration,
  loadAuthenticationConfiguration,
} from '../../../core/config/authentication.js'
import { loadAuthorizationConfiguration } from '../../../core/config/authorization.js'
import { loadAuditPolicy } from '../../../core/config/audit-policy.js'
import type { AuditPolicy } from '../../../core/audit/types.js'
import { ConfigFileError } from '../../../core/config/decode.js'
import { type EncryptionConfiguration, type EncryptionLoadOptions, loadEncryptionConfiguration } from '../../../core/config/encryption.js'
import { type KubeconfigConnection, loadKubeconfigConnection } from '../../../core/config/kubeconfig.js'
import { loadTracingConfiguration, type TracingConfiguration } from '../../../core/config/tracing.js'
import { type EgressSelectorConfiguration, loadEgressSelectorConfiguration } from '../../../core/config/egress-selector.js'
import { featureEnabled, type ParsedFlags } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { admissionPluginNames } from './admission.js'

export interface ConfigFiles {
  authentication?: LoadedAuthenticationConfiguration
  authorization?: ReturnType<typeof loadAuthorizationConfiguration>
  encryption?: EncryptionConfiguration
  admission?: AdmissionConfiguration
  tracing?: TracingConfiguration
  /** Checked only: every selection must be Direct, which is how the server connects. */
  egressSelector?: EgressSelectorConfiguration
  abacPolicy?: AbacPolicy[]
  tokenWebhook?: KubeconfigConnection
  authorizationWebhook?: KubeconfigConnection
  auditWebhook?: KubeconfigConnection
  auditPolicy?: AuditPolicy
}

/** Every problem found in the files, one per line; the daemon prints them and exits 1. */
export class ConfigFilesError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigFilesError'
  }
}

/** Why a connection file named inside AuthorizationConfiguration cannot be used, as upstream words it. */
function connectionFileProblem(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? undefined : 'must be a regular file'
  } catch (err) {
    return `error loading file: ${(err as Error).message}`
  }
}

export function loadConfigFiles(parsed: ParsedFlags, logger: Logger): ConfigFiles {
  const { values, set } = parsed
  const problems: string[] = []
  const files: ConfigFiles = {}

  /** Reads the file a flag names and hands it to `load`; collects what goes wrong. */
  const read = <T>(flag: keyof typeof values, load: (text: string, path: string) => T): T | undefined => {
    const path = values[flag]
    if (typeof path !== 'string' || path === '') return undefined
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      problems.push(`--${flag}: cannot read ${path}: ${(err as Error).message}`)
      return undefined
    }
    try {
      return load(text, path)
    } catch (err) {
      if (!(err instanceof ConfigFileError)) throw err
      problems.push(`--${flag}: ${err.message}`)
      return undefined
    }
  }
  const assign = <K extends keyof ConfigFiles>(key: K, value: ConfigFiles[K] | undefined): void => {
    if (value !== undefined) files[key] = value
  }

  const authentication = read('authentication-config', (text, path) =>
    loadAuthenticationConfiguration(text, path, { disallowedIssuers: values['service-account-issuer'] }),
  )
  if (authentication) problems.push(...authenticationFlagConflicts(authentication, set))
  assign('authentication', authentication)
  assign(
    'authorization',
    read('authorization-config', (text, path) => loadAuthorizationConfiguration(text, path, { checkConnectionFile: connectionFileProblem })),
  )
  assign(
    'encryption',
    read('encryption-provider-config', (text, path) =>
      loadEncryptionConfiguration(text, path, encryptionLoadOptions(values)),
    ),
  )
  const enabledPlugins = admissionPluginNames(values).names
  assign('admission', read('admission-control-config-file', (text, path) => loadAdmissionConfiguration(text, path, { enabledPlugins })))
  assign('tracing', read('tracing-config-file', loadTracingConfiguration))
  assign('egressSelector', read('egress-selector-config-file', loadEgressSelectorConfiguration))
  assign(
    'abacPolicy',
    read('authorization-policy-file', (text, path) =>
      loadAbacPolicy(text, path, (w) => logger.warn({ file: path }, `--authorization-policy-file: ${w.message}`)),
    ),
  )
  assign('tokenWebhook', read('authentication-token-webhook-config-file', loadKubeconfigConnection))
  assign('authorizationWebhook', read('authorization-webhook-config-file', loadKubeconfigConnection))
  assign('auditWebhook', read('audit-webhook-config-file', loadKubeconfigConnection))
  assign('auditPolicy', read('audit-policy-file', loadAuditPolicy))

  if (problems.length) throw new ConfigFilesError(problems)
  return files
}

/** How `--encryption-provider-config` is read: the reload flag and the KMSv1 gate change its rules. */
export function encryptionLoadOptions(values: ParsedFlags['values']): EncryptionLoadOptions {
  return { reload: values['encryption-provider-config-automatic-reload'], kmsV1: featureEnabled(values, 'KMSv1') }
}
