/**
 * AdmissionConfiguration, the file of `--admission-control-config-file`
 * (spec: AdmissionConfiguration, AdmissionPluginConfiguration): one entry of
 * configuration per admission plugin, inline or in a file of its own.
 */
import { z } from 'zod'
import { duplicate, type FieldError, FieldPath, notSupported, required } from '../machinery/field.js'
import { ADMISSION_PLUGIN_NAMES, type AdmissionPluginName, isAdmissionPluginName } from './admission-plugins.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig, parseConfigText } from './decode.js'
import { resolveFrom } from './file-path.js'
import { goList, goPointer, goString } from './fields.js'

const pluginSchema = z.lazy(() => z.strictObject({
  name: goString,
  path: goString,
  // An embedded object (runtime.Unknown upstream): the plugin decodes it, so it is kept as data.
  configuration: goPointer(z.record(z.string(), z.unknown())),
}))

const admissionSchema = z.lazy(() => z.strictObject({ plugins: goList(pluginSchema) }))

type AdmissionFile = z.infer<typeof admissionSchema>

export interface AdmissionPluginConfiguration {
  name: AdmissionPluginName
  /** The plugin's own configuration file, resolved against the directory of the AdmissionConfiguration file. */
  path?: string
  /** Inline configuration; when present it is used instead of `path`. */
  configuration?: Record<string, unknown>
}

export interface AdmissionConfiguration {
  plugins: AdmissionPluginConfiguration[]
}

export interface AdmissionLoadOptions {
  /**
   * The plugins that will run. Only used for the legacy unversioned file,
   * which upstream hands whole to ImagePolicyWebhook and PodNodeSelector
   * when they are enabled.
   * @default every known plugin
   */
  enabledPlugins?: readonly string[]
}

/** Upstream reads `apiserver.k8s.io/v1alpha1` too, the group the kind had before it moved to apiserver.config.k8s.io. */
const ADMISSION_API_VERSIONS = [`${CONFIG_GROUP}/v1`, 'apiserver.k8s.io/v1alpha1'] as const

function validateAdmission(file: AdmissionFile): FieldError[] {
  const seen = new Set<string>()
  return file.plugins.flatMap((plugin, i) => {
    const name = FieldPath.root('plugins').index(i).child('name')
    if (plugin.name === '') return [required(name)]
    // The spec: the name must be a registered plugin; upstream would silently never use the entry.
    if (!isAdmissionPluginName(plugin.name)) return [notSupported(name, plugin.name, ADMISSION_PLUGIN_NAMES)]
    // The spec: one entry per plugin; upstream would silently use only the first.
    if (seen.has(plugin.name)) return [duplicate(name, plugin.name)]
    seen.add(plugin.name)
    return []
  })
}

const AdmissionKind: ConfigKind<AdmissionFile> = {
  kind: 'AdmissionConfiguration',
  apiVersions: ADMISSION_API_VERSIONS,
  schema: admissionSchema,
  validate: validateAdmission,
}

// Before the versioned kind existed, these two plugins read the whole file as their own configuration.
const LEGACY_PLUGIN_KEYS: Readonly<Record<string, AdmissionPluginName>> = {
  imagePolicy: 'ImagePolicyWebhook',
  podNodeSelectorPluginConfig: 'PodNodeSelector',
}

/** A file that is not an AdmissionConfiguration but one of the two legacy plugin files, as upstream recognises them. */
function isLegacyPluginFile(doc: unknown): boolean {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false
  const { apiVersion, kind } = doc as { apiVersion?: unknown; kind?: unknown }
  const versioned = kind === AdmissionKind.kind && ADMISSION_API_VERSIONS.some((v) => v === apiVersion)
  return !versioned && Object.keys(LEGACY_PLUGIN_KEYS).some((key) => key in doc)
}

/**
 * Reads and validates the text of an AdmissionConfiguration file found at
 * `source`. Throws ConfigFileError listing every problem.
 */
export function loadAdmissionConfiguration(text: string, source: string, options: AdmissionLoadOptions = {}): AdmissionConfiguration {
  if (isLegacyPluginFile(parseConfigText(text, source, AdmissionKind.kind))) {
    const enabled = options.enabledPlugins ?? ADMISSION_PLUGIN_NAMES
    const names = Object.values(LEGACY_PLUGIN_KEYS).filter((name) => enabled.includes(name))
    return { plugins: names.map((name) => ({ name, path: source })) }
  }
  const file = decodeConfig(text, source, AdmissionKind)
  return {
    plugins: file.plugins.map((plugin) => ({
      name: plugin.name as AdmissionPluginName,
      ...(plugin.path ? { path: resolveFrom(source, plugin.path) } : {}),
      ...(plugin.configuration ? { configuration: plugin.configuration } : {}),
    })),
  }
}
