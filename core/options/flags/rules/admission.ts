/**
 * Rules for admission plugins (upstream: AdmissionOptions.Validate, with
 * kube-apiserver's check of the deprecated --admission-control).
 */
import { ADMISSION_PLUGINS } from '../table/admission.js'
import type { Rule } from './rule.js'

const KNOWN: ReadonlySet<string> = new Set(ADMISSION_PLUGINS)

const admissionPlugins: Rule = ({ values, set }) => {
  const problems: string[] = []
  if (set.has('admission-control') && (set.has('enable-admission-plugins') || set.has('disable-admission-plugins'))) {
    problems.push('admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive')
  }
  for (const flag of ['admission-control', 'enable-admission-plugins', 'disable-admission-plugins'] as const) {
    for (const name of values[flag]) if (!KNOWN.has(name)) problems.push(`${flag} plugin ${JSON.stringify(name)} is unknown`)
  }
  const disabled = new Set(values['disable-admission-plugins'])
  const both = [...new Set(values['enable-admission-plugins'])].filter((p) => disabled.has(p)).sort()
  if (both.length) problems.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`)
  return problems
}

export const ADMISSION_RULES: readonly Rule[] = [admissionPlugins]
