/**
 * The command line as data (docs/architecture.md): the flag table, the
 * parser, the cross-flag rules, `--help`, the flag reference and the
 * start-up warnings.
 */
export { flagReference } from './docs.js'
export { type FeatureGate, FEATURE_GATES, featureEnabled } from './features.js'
export { helpText, PENDING_MARK } from './help.js'
export { type CommandLine, FlagError, type ParsedFlags, parseCommandLine } from './parse.js'
export { authorizationModes, validateFlags } from './rules/index.js'
export type { FlagSpec, Section, Status } from './spec.js'
export { defaultValues, FLAGS, type FlagName, flagSpec, type FlagValues } from './table.js'
export { DEFAULT_CERT_DIR } from './table/secure-serving.js'
export { startupWarnings, unenforcedSecurityFlags } from './warnings.js'
export { readCommandLine } from './command-line.js'

