/**
 * PodSecurityConfiguration, the PodSecurity plugin's entry of the
 * AdmissionConfiguration file: the policy of a namespace without labels
 * (`defaults`) and who is exempt (`exemptions`: usernames, runtime classes,
 * namespaces). Validated at start-up with field paths.
 */
import { z } from 'zod'
import { type ConfigKind, decodeConfigDocument } from '../../config/decode.js'
import { goList, goString } from '../../config/fields.js'
import { duplicate, type FieldError, FieldPath, invalid } from '../../machinery/field.js'
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/names.js'
import { isLevel, LEVELS, type Level, minorOf, MODES, type NamespacePolicy } from './policy.js'

const defaultsSchema = z.lazy(() => z.strictObject({
  enforce: goString,
  'enforce-version': goString,
  audit: goString,
  'audit-version': goString,
  warn: goString,
  'warn-version': goString,
}))

const configurationSchema = z.lazy(() => z.strictObject({
  defaults: z.preprocess((v) => v ?? {}, defaultsSchema),
  exemptions: z.preprocess(
    (v) => v ?? {},
    z.strictObject({ usernames: goList(z.string()), runtimeClasses: goList(z.string()), namespaces: goList(z.string()) }),
  ),
}))

type ConfigurationFile = z.infer<typeof configurationSchema>

export interface PodSecurityConfiguration {
  defaults: NamespacePolicy
  exemptions: { usernames: ReadonlySet<string>; runtimeClasses: ReadonlySet<string>; namespaces: ReadonlySet<string> }
}

function listErrors(path: FieldPath, values: readonly string[], check: (v: string) => string[]): FieldError[] {
  const seen = new Set<string>()
  return values.flatMap((value, i) => {
    const at = path.index(i)
    const problems = check(value)
    if (problems.length) return [invalid(at, value, problems.join('; '))]
    if (seen.has(value)) return [duplicate(at, value)]
    seen.add(value)
    return []
  })
}

function validate(file: ConfigurationFile): FieldError[] {
  const defaults = FieldPath.root('defaults')
  const exemptions = FieldPath.root('exemptions')
  return [
    ...MODES.flatMap((mode) => {
      const level = file.defaults[mode]
      const version = file.defaults[`${mode}-version`]
      return [
        ...(level && !isLevel(level) ? [invalid(defaults.child(mode), level, `must be one of ${LEVELS.join(', ')}`)] : []),
        ...(version && minorOf(version) === undefined ? [invalid(defaults.child(`${mode}-version`), version, 'must be "latest" or "v1.x"')] : []),
      ]
    }),
    ...listErrors(exemptions.child('namespaces'), file.exemptions.namespaces, isDNS1123Label),
    ...listErrors(exemptions.child('usernames'), file.exemptions.usernames, (v) => (v === '' ? ['must be non-empty'] : [])),
    ...listErrors(exemptions.child('runtimeClasses'), file.exemptions.runtimeClasses, isDNS1123Subdomain),
  ]
}

const PodSecurityConfigurationKind: ConfigKind<ConfigurationFile> = {
  kind: 'PodSecurityConfiguration',
  apiVersions: ['pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.k8s.io/v1beta1', 'pod-security.admission.config.k8s.io/v1alpha1'],
  schema: configurationSchema,
  validate,
}

/**
 * The plugin's configuration (none: privileged:latest for every mode, no exemptions). Throws a
 * ConfigFileError naming `source`, where the configuration was found.
 */
export function podSecurityConfiguration(configuration: unknown, source = 'PodSecurity plugin configuration'): PodSecurityConfiguration {
  const file: ConfigurationFile =
    configuration === undefined
      ? { defaults: { enforce: '', 'enforce-version': '', audit: '', 'audit-version': '', warn: '', 'warn-version': '' }, exemptions: { usernames: [], runtimeClasses: [], namespaces: [] } }
      : decodeConfigDocument(configuration, source, PodSecurityConfigurationKind)
  const defaults = Object.fromEntries(
    MODES.map((mode) => [mode, { level: (file.defaults[mode] || 'privileged') as Level, version: file.defaults[`${mode}-version`] || 'latest' }]),
  ) as NamespacePolicy
  return {
    defaults,
    exemptions: {
      usernames: new Set(file.exemptions.usernames),
      runtimeClasses: new Set(file.exemptions.runtimeClasses),
      namespaces: new Set(file.exemptions.namespaces),
    },
  }
}
