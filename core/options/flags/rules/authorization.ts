/**
 * Rules for authorization (upstream: BuiltInAuthorizationOptions.Validate):
 * either an --authorization-config file or the legacy mode flags, and
 * each mode with the file it needs.
 */
import { featureEnabled } from '../features.js'
import type { FlagName } from '../table.js'
import { AUTHORIZATION_MODES } from '../table/authorization.js'
import { WEBHOOK_VERSIONS } from './authentication.js'
import { oneOf, type Rule } from './rule.js'

/** The flags that --authorization-config replaces; giving any of them beside it is an error. */
const LEGACY_FLAGS: readonly FlagName[] = [
  'authorization-mode',
  'authorization-webhook-config-file',
  'authorization-webhook-version',
  'authorization-webhook-cache-authorized-ttl',
  'authorization-webhook-cache-unauthorized-ttl',
]

/** The modes in effect: as given, or AlwaysAllow when none are given and no file is used. */
export function authorizationModes(values: { 'authorization-mode': string[]; 'authorization-config': string }): string[] {
  const modes = values['authorization-mode']
  return modes.length === 0 && values['authorization-config'] === '' ? ['AlwaysAllow'] : modes
}

const authorizationConfig: Rule = ({ values, set }) => {
  if (values['authorization-config'] === '') return []
  if (!featureEnabled(values, 'StructuredAuthorizationConfiguration')) {
    return ['--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag']
  }
  return LEGACY_FLAGS.some((f) => set.has(f))
    ? ['--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined']
    : []
}

const authorizationModeRules: Rule = ({ values }) => {
  if (values['authorization-config'] !== '') return []
  const modes = authorizationModes(values)
  const problems: string[] = []
  for (const mode of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode)) problems.push(`authorization-mode ${JSON.stringify(mode)} is not a valid mode`)
    if (mode === 'ABAC' && values['authorization-policy-file'] === '') problems.push("authorization-mode ABAC's authorization policy file not passed")
    if (mode === 'Webhook' && values['authorization-webhook-config-file'] === '') {
      problems.push("authorization-mode Webhook's authorization config file not passed")
    }
  }
  if (values['authorization-policy-file'] !== '' && !modes.includes('ABAC')) problems.push('cannot specify --authorization-policy-file without mode ABAC')
  if (values['authorization-webhook-config-file'] !== '' && !modes.includes('Webhook')) {
    problems.push('cannot specify --authorization-webhook-config-file without mode Webhook')
  }
  if (new Set(modes).size !== modes.length) problems.push(`authorization-mode [${modes.map((m) => JSON.stringify(m)).join(' ')}] has mode specified more than once`)
  return problems
}

const webhookVersion: Rule = ({ values }) => oneOf('authorization-webhook-version', values['authorization-webhook-version'], WEBHOOK_VERSIONS)

export const AUTHORIZATION_RULES: readonly Rule[] = [authorizationConfig, authorizationModeRules, webhookVersion]
