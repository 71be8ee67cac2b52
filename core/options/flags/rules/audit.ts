/**
 * Rules for the audit backends (upstream: AuditOptions.Validate). As
 * upstream, a backend's settings are only checked once it is on: the log
 * backend with --audit-log-path, the webhook backend with
 * --audit-webhook-config-file.
 */
import type { FlagValues } from '../table.js'
import { AUDIT_GROUP_VERSIONS, AUDIT_LOG_FORMATS, AUDIT_MODES } from '../table/auditing.js'
import type { Rule } from './rule.js'

type Backend = 'log' | 'webhook'

function backendProblems(values: FlagValues, backend: Backend): string[] {
  const get = <S extends string>(suffix: S) => values[`audit-${backend}-${suffix}` as keyof FlagValues]
  const problems: string[] = []
  const mode = get('mode') as string
  if (!(AUDIT_MODES as readonly string[]).includes(mode)) {
    problems.push(`invalid audit ${backend} mode ${mode}, allowed modes are ${JSON.stringify(AUDIT_MODES.join(','))}`)
  } else if (mode === 'batch') {
    const positive = (suffix: string, what: string): void => {
      const n = get(suffix) as number
      if (n <= 0) problems.push(`invalid audit batch ${backend} ${what} ${n}, must be a positive number`)
    }
    positive('batch-buffer-size', 'buffer size')
    positive('batch-max-size', 'max batch size')
    if (get('batch-throttle-enable')) {
      positive('batch-throttle-qps', 'throttle QPS')
      positive('batch-throttle-burst', 'throttle burst')
    }
  }
  const maxEvent = get('truncate-max-event-size') as number
  const maxBatch = get('truncate-max-batch-size') as number
  if (maxEvent <= 0) problems.push(`invalid audit truncate ${backend} max event size ${maxEvent}, must be a positive number`)
  else if (maxBatch < maxEvent) {
    problems.push(`invalid audit truncate ${backend} max batch size ${maxBatch}, must be greater than max event size (${maxEvent})`)
  }
  const version = get('version') as string
  if (!(AUDIT_GROUP_VERSIONS as readonly string[]).includes(version)) {
    problems.push(`--audit-${backend}-version: invalid group version ${JSON.stringify(version)}, allowed versions are ${JSON.stringify(AUDIT_GROUP_VERSIONS)}`)
  }
  return problems
}

const logBackend: Rule = ({ values }) => {
  if (values['audit-log-path'] === '') return []
  const problems = backendProblems(values, 'log')
  const format = values['audit-log-format']
  if (!(AUDIT_LOG_FORMATS as readonly string[]).includes(format)) {
    problems.push(`invalid audit log format ${format}, allowed formats are ${JSON.stringify(AUDIT_LOG_FORMATS.join(','))}`)
  }
  for (const [flag, what] of [['audit-log-maxage', 'maxage'], ['audit-log-maxbackup', 'maxbackup'], ['audit-log-maxsize', 'maxsize']] as const) {
    if (values[flag] < 0) problems.push(`--audit-log-${what} ${values[flag]} can't be a negative number`)
  }
  return problems
}

const webhookBackend: Rule = ({ values }) => (values['audit-webhook-config-file'] === '' ? [] : backendProblems(values, 'webhook'))

export const AUDIT_RULES: readonly Rule[] = [logBackend, webhookBackend]
