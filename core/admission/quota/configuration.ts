/**
 * ResourceQuotaConfiguration, the ResourceQuota plugin's entry of the
 * AdmissionConfiguration file: `limitedResources` names what may only be
 * consumed in a namespace whose quota covers it (upstream's
 * resourcequota.admission.k8s.io Configuration). Validated at start-up.
 */
import { z } from 'zod'
import { CONFIG_GROUP, type ConfigKind, decodeConfigDocument } from '../../config/decode.js'
import { goList, goString } from '../../config/fields.js'
import { FieldPath, notSupported, required } from '../../machinery/field.js'
import type { ScopeSelector } from '../../quota/scopes.js'

const scopeSchema = z.lazy(() => z.strictObject({
  scopeName: goString,
  operator: goString,
  values: goList(z.string()),
}))

const limitedResourceSchema = z.lazy(() => z.strictObject({
  apiGroup: goString,
  resource: goString,
  matchContains: goList(z.string()),
  matchScopes: goList(scopeSchema),
}))

const configurationSchema = z.lazy(() => z.strictObject({ limitedResources: goList(limitedResourceSchema) }))

export interface LimitedResource {
  apiGroup: string
  resource: string
  matchContains: string[]
  matchScopes: ScopeSelector[]
}

export interface ResourceQuotaConfiguration {
  limitedResources: LimitedResource[]
}

const SCOPE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist']

const QuotaConfigurationKind: ConfigKind<ResourceQuotaConfiguration> = {
  kind: 'ResourceQuotaConfiguration',
  // The kind's own group first, then the config group the documentation shows.
  apiVersions: ['resourcequota.admission.k8s.io/v1', 'resourcequota.admission.k8s.io/v1beta1', 'resourcequota.admission.k8s.io/v1alpha1', `${CONFIG_GROUP}/v1`],
  schema: configurationSchema,
  validate: (config) =>
    config.limitedResources.flatMap((limited, i) => {
      const at = FieldPath.root('limitedResources').index(i)
      const errs = limited.resource === '' ? [required(at.child('resource'))] : []
      limited.matchScopes.forEach((scope, j) => {
        if (!SCOPE_OPERATORS.includes(scope.operator)) errs.push(notSupported(at.child('matchScopes').index(j).child('operator'), scope.operator, SCOPE_OPERATORS))
      })
      return errs
    }),
}

/**
 * The plugin's configuration from its AdmissionConfiguration entry (none: nothing is limited by default).
 * Throws a ConfigFileError naming `source`, where the configuration was found.
 */
export function resourceQuotaConfiguration(configuration: unknown, source = 'ResourceQuota plugin configuration'): ResourceQuotaConfiguration {
  if (configuration === undefined) return { limitedResources: [] }
  return decodeConfigDocument(configuration, source, QuotaConfigurationKind)
}
