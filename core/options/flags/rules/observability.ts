/**
 * Rules for logs and metrics (upstream: the logging configuration checks
 * and metrics.Options.Validate).
 */
import { featureEnabled } from '../features.js'
import { LOGGING_FORMATS } from '../table/observability.js'
import { forbidden, oneOf, type Rule } from './rule.js'

const loggingFormat: Rule = ({ values }) => oneOf('logging-format', values['logging-format'], LOGGING_FORMATS)

/** As upstream, per-module verbosity is a feature of the text format only. */
const vmoduleTextOnly: Rule = ({ values }) =>
  values.vmodule.length > 0 && values['logging-format'] !== 'text' ? [forbidden('vmodule', 'Only supported for text log format')] : []

/** The split text streams are alpha: they need the LoggingAlphaOptions gate. */
const loggingAlphaOptions: Rule = ({ values }) => {
  if (featureEnabled(values, 'LoggingAlphaOptions')) return []
  const problems: string[] = []
  if (values['log-text-split-stream']) problems.push(forbidden('log-text-split-stream', 'Feature LoggingAlphaOptions is disabled'))
  if (values['log-text-info-buffer-size'] !== 0) problems.push(forbidden('log-text-info-buffer-size', 'Feature LoggingAlphaOptions is disabled'))
  return problems
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/

const disabledMetrics: Rule = ({ values }) =>
  values['disabled-metrics']
    .filter((name) => !METRIC_NAME.test(name))
    .map((name) => `--disabled-metrics must be fully qualified metric names matching ${JSON.stringify(METRIC_NAME.source)}, got ${JSON.stringify(name)}`)

export const OBSERVABILITY_RULES: readonly Rule[] = [loggingFormat, vmoduleTextOnly, loggingAlphaOptions, disabledMetrics]
