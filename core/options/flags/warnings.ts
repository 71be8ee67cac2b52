/**
 * Start-up warnings about the flags the user gave: one for each flag that
 * is accepted but not yet in effect, and one for each deprecated flag or
 * value. The daemon logs each once.
 */
import type { ParsedFlags } from './parse.js'
import { flagSpec } from './table.js'
import { INSECURE_TLS_CIPHER_SUITES } from './table/secure-serving.js'

const INSECURE: ReadonlySet<string> = new Set(INSECURE_TLS_CIPHER_SUITES)

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
  return warnings
}
