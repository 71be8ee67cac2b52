/**
 * The admission flags as the daemon applies them: which plugins run
 * (`--enable-admission-plugins`, `--disable-admission-plugins`, or the
 * deprecated `--admission-control` as the complete list), each plugin's
 * configuration from `--admission-control-config-file` (inline, or its
 * `path` file read here, relative to the config file), and the two
 * toleration flags. Every problem stops start-up; a plugin named explicitly
 * that the server does not implement is one of them.
 */
import { readFileSync } from 'node:fs'
import type { AdmissionConfiguration } from '../../../core/config/admission.js'
import { ADMISSION_PLUGINS_IN_ORDER, type AdmissionPluginName, enabledAdmissionPlugins } from '../../../core/config/admission-plugins.js'
import { ConfigFileError, parseConfigText } from '../../../core/config/decode.js'
import { admissionConfigurationProblems, unimplementedAdmissionPlugins } from '../../../core/admission/plugins.js'
import { featureEnabled } from '../../../core/options/flags/features.js'
import type { AdmissionOptions } from '../../../core/options/api-server-options.js'
import { type ImagePolicySettings, readImagePolicyFile } from '../../../core/admission/builtin/image-policy-webhook.js'
import { loadKubeconfigConnection } from '../../../core/config/kubeconfig.js'
import { webhookConnection } from './authorization.js'
import type { ParsedFlags } from '../../../core/options/flags/index.js'

export interface DaemonAdmission {
  options: AdmissionOptions
  /** Default-enabled plugins left out because the server does not implement them yet: logged at start. */
  notImplementedDefaults: AdmissionPluginName[]
  problems: string[]
}

/** The plugins the flags turn on, in upstream's order; `--admission-control` replaces the default set. */
export function admissionPluginNames(values: ParsedFlags['values']): { names: AdmissionPluginName[]; explicit: ReadonlySet<string> } {
  const legacy = values['admission-control']
  if (legacy.length) return { names: ADMISSION_PLUGINS_IN_ORDER.filter((n) => legacy.includes(n)), explicit: new Set(legacy) }
  const enable = values['enable-admission-plugins']
  return { names: enabledAdmissionPlugins(enable, values['disable-admission-plugins']), explicit: new Set(enable) }
}

/** Each enabled plugin's raw configuration: inline, else its file parsed. */
function rawConfigurations(
  names: readonly AdmissionPluginName[],
  file: AdmissionConfiguration | undefined,
  configFile: string,
  problems: string[],
): { raw: Partial<Record<AdmissionPluginName, unknown>>; sources: Partial<Record<AdmissionPluginName, string>> } {
  const raw: Partial<Record<AdmissionPluginName, unknown>> = {}
  const sources: Partial<Record<AdmissionPluginName, string>> = {}
  for (const [i, entry] of (file?.plugins ?? []).entries()) {
    if (!names.includes(entry.name)) continue
    if (entry.configuration) {
      raw[entry.name] = entry.configuration
      sources[entry.name] = `${configFile}: plugins[${i}].configuration`
    } else if (entry.path) {
      sources[entry.name] = entry.path
      try {
        raw[entry.name] = parseConfigText(readFileSync(entry.path, 'utf8'), entry.path, `${entry.name} configuration`)
      } catch (err) {
        problems.push(
          err instanceof ConfigFileError
            ? `--admission-control-config-file: ${err.message}`
            : `--admission-control-config-file: plugins[${i}].path: cannot read ${entry.path}: ${(err as Error).message}`,
        )
      }
    }
  }
  return { raw, sources }
}

/** ImagePolicyWebhook's file settings with its kubeconfig read into a connection, as the plugin takes them. */
function imagePolicySettings(raw: unknown, problems: string[]): ImagePolicySettings | undefined {
  try {
    const { kubeConfigFile, ...settings } = readImagePolicyFile(raw)
    const connection = webhookConnection(loadKubeconfigConnection(readFileSync(kubeConfigFile, 'utf8'), kubeConfigFile))
    return { ...settings, connection }
  } catch (err) {
    problems.push(`--admission-control-config-file: ${(err as Error).message}`)
    return undefined
  }
}

export function daemonAdmission(parsed: ParsedFlags, file: AdmissionConfiguration | undefined): DaemonAdmission {
  const { values } = parsed
  const problems: string[] = []
  const { names, explicit } = admissionPluginNames(values)
  const unimplemented = unimplementedAdmissionPlugins(names)
  const refused = unimplemented.filter((n) => explicit.has(n))
  if (refused.length) {
    const flag = values['admission-control'].length ? '--admission-control' : '--enable-admission-plugins'
    problems.push(
      `${flag}: admission plugin${refused.length > 1 ? 's' : ''} ${refused.join(', ')} not implemented by this server yet; refusing to start rather than admit what ${refused.length > 1 ? 'they' : 'it'} would refuse`,
    )
  }
  const running = names.filter((n) => !unimplemented.includes(n))
  const { raw, sources } = rawConfigurations(running, file, values['admission-control-config-file'], problems)
  if (raw.ImagePolicyWebhook !== undefined) raw.ImagePolicyWebhook = imagePolicySettings(raw.ImagePolicyWebhook, problems)
  for (const problem of admissionConfigurationProblems(running, raw, (name) => sources[name] ?? `--admission-control-config-file (no entry for ${name})`))
    problems.push(`--admission-control-config-file: ${problem}`)
  return {
    options: {
      plugins: running,
      configurations: raw,
      defaultNotReadyTolerationSeconds: values['default-not-ready-toleration-seconds'],
      defaultUnreachableTolerationSeconds: values['default-unreachable-toleration-seconds'],
      mutatingAdmissionPolicy: featureEnabled(values, 'MutatingAdmissionPolicy'),
      serviceAccountNodeAudienceRestriction: featureEnabled(values, 'ServiceAccountNodeAudienceRestriction'),
    },
    notImplementedDefaults: unimplemented.filter((n) => !explicit.has(n)),
    problems,
  }
}
