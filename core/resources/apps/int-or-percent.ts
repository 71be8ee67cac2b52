/**
 * Rollout bounds given as a count or a percentage (`1`, `"25%"`), as
 * upstream's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent read them.
 */
import { type FieldError, type FieldPath, invalid } from '../../machinery/field.js'
import { goIntOrString } from '../../machinery/go-format.js'
import { NON_NEGATIVE } from './selector.js'

const PERCENT_RE = /^[0-9]+%$/
const PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"

/** The percentage of a well-formed percent string, else undefined. */
function percentOf(value: unknown): number | undefined {
  return typeof value === 'string' && PERCENT_RE.test(value) ? Number.parseInt(value.slice(0, -1), 10) : undefined
}

/** The number a bound stands for: the percentage, the count, or 0 for anything malformed (Go's Atoi failing). */
export function intOrPercentValue(value: unknown): number {
  const percent = percentOf(value)
  if (percent !== undefined) return percent
  if (typeof value === 'number') return value
  return typeof value === 'string' && /^[+-]?\d+$/.test(value) ? Number.parseInt(value, 10) : 0
}

export function validatePositiveIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === 'string') return percentOf(value) === undefined ? [invalid(path, goIntOrString(value), PERCENT_MESSAGE)] : []
  if (typeof value === 'number' && value < 0) return [invalid(path, value, NON_NEGATIVE)]
  return []
}

/** The two bounds of a rolling update (Deployment, DaemonSet), each a count or a well-formed percentage. */
export function validateRolloutBounds(rollingUpdate: Record<string, unknown>, path: FieldPath): FieldError[] {
  return [
    ...validatePositiveIntOrPercent(rollingUpdate['maxUnavailable'], path.child('maxUnavailable')),
    ...validatePositiveIntOrPercent(rollingUpdate['maxSurge'], path.child('maxSurge')),
  ]
}

export function notMoreThan100Percent(value: unknown, path: FieldPath): FieldError[] {
  const percent = percentOf(value)
  return percent !== undefined && percent > 100 ? [invalid(path, goIntOrString(value), 'must not be greater than 100%')] : []
}
