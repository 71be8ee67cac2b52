/**
 * Every cross-flag rule, run together so that a user sees all the
 * problems of a command line at once, as upstream aggregates them.
 */
import type { ParsedFlags } from '../parse.js'
import { ADMISSION_RULES } from './admission.js'
import { AUDIT_RULES } from './audit.js'
import { AUTHENTICATION_RULES } from './authentication.js'
import { AUTHORIZATION_RULES } from './authorization.js'
import { OBSERVABILITY_RULES } from './observability.js'
import { LEADER_ELECTION_RULES } from './leader-election.js'
import { PERSISTENCE_RULES } from './persistence.js'
import type { Rule } from './rule.js'
import { SERVICE_RULES } from './services.js'
import { SERVING_RULES } from './serving.js'
import { VERSION_RULES } from './versions.js'

const RULES: readonly Rule[] = [
  ...SERVING_RULES,
  ...PERSISTENCE_RULES,
  ...AUDIT_RULES,
  ...AUTHENTICATION_RULES,
  ...AUTHORIZATION_RULES,
  ...ADMISSION_RULES,
  ...VERSION_RULES,
  ...OBSERVABILITY_RULES,
  ...SERVICE_RULES,
  ...LEADER_ELECTION_RULES,
]

/** The problems of a parsed command line, each a message for the user; empty when it is fine. */
export function validateFlags(flags: ParsedFlags): string[] {
  return RULES.flatMap((rule) => rule(flags))
}

export { authorizationModes } from './authorization.js'
