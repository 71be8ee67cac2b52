/**
 * Start-up warnings about the flags the user gave: one for each flag that
 * is accepted but not yet in effect, and one for each deprecated flag or
 * value. The daemon logs each once.
 */
import { featureGateWarnings } from './features.js'
import type { ParsedFlags } from './parse.js'
import type { FlagSpec } from './spec.js'
import { type FlagName, flagSpec } from './table.js'
import { ENFORCED_AUTHORIZATION_MODES } from './table/authorization.js'
import { INSECURE_TLS_CIPHER_SUITES } from './table/secure-serving.js'
import { appendAll } from '../../machinery/append-all.js'

const INSECURE: ReadonlySet<string> = new Set(INSECURE_TLS_CIPHER_SUITES)

/**
 * One problem per security flag given that the server does not enforce yet
 * (status `refused`): start-up stops on them, as a control plane must fail
 * closed rather than accept a setting and ignore it.
 */
export function unenforcedSecurityFlags(flags: ParsedFlags, specOf: (name: FlagName) => Pick<FlagSpec, 'status' | 'pending'> = flagSpec): string[] {
  const problems: string[] = []
  for (const name of flags.set) {
    const spec = specOf(name)
    if (spec.status !== 'refused') continue
    const label = `--${flags.spelled.get(name) ?? name}`
    problems.push(`${label}: not enforced by this server yet (${spec.pending ?? ''}); refusing to start rather than ignore a security setting`)
  }
  for (const mode of flags.values['authorization-mode']) {
    if (ENFORCED_AUTHORIZATION_MODES.includes(mode)) continue
    problems.push(`--authorization-mode: the ${mode} authorizer is not implemented yet; refusing to start rather than ignore a security setting`)
  }
  return problems
}

export function startupWarnings(flags: ParsedFlags): string[] {
  const warnings: string[] = []
  for (const name of flags.set) {
    const spec = flagSpec(name)
    const label = `--${flags.spelled.get(name) ?? name}`
    if (spec.deprecated) warnings.push(`${label} is deprecated: ${spec.deprecated}`)
    if (spec.status === 'pending') warnings.push(`${label} is accepted but not yet in effect: ${spec.pending ?? ''}`)
  }
  const { values } = flags
  if (values['endpoint-reconciler-type'] === 'master-count') {
    warnings.push('--endpoint-reconciler-type=master-count is deprecated and will be removed in a future version; use lease')
  }
  for (const suite of values['tls-cipher-suites']) if (INSECURE.has(suite)) warnings.push(`--tls-cipher-suites: ${suite} is insecure`)
  appendAll(warnings, featureGateWarnings(values))
  return warnings
}
