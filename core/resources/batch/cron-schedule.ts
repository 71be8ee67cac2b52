/**
 * The schedule syntax of a CronJob, as the cron parser upstream uses
 * (robfig/cron v3, ParseStandard) accepts it: five fields (minute, hour, day
 * of month, month, day of week) of lists, ranges and steps, month and weekday
 * names, the `@hourly`-style descriptors and `@every <duration>`, optionally
 * led by `TZ=<zone>` or `CRON_TZ=<zone>`. Returns the parser's error text.
 */
import { parseGoDuration } from '../../machinery/duration.js'
import { loadLocationError } from './time-zone.js'

interface Bounds {
  min: number
  max: number
  names?: Readonly<Record<string, number>>
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']

/** minute, hour, day of month, month, day of week */
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(WEEKDAYS.map((d, i) => [d, i])) },
]

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'])
const EVERY = '@every '

/** The problem with a schedule, worded as the parser words it; undefined when it parses. */
export function cronScheduleError(schedule: string): string | undefined {
  if (schedule.length === 0) return 'empty spec string'
  let spec = schedule
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ')
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space)
    const problem = loadLocationError(zone)
    if (problem) return `provided bad location ${zone}: ${problem}`
    spec = space < 0 ? '' : spec.slice(space).trim()
  }
  if (spec.startsWith('@')) return descriptorError(spec)
  const fields = spec.split(/\s+/).filter((f) => f !== '')
  if (fields.length !== FIELDS.length) return `expected exactly ${FIELDS.length} fields, found ${fields.length}: [${fields.join(' ')}]`
  for (const [i, field] of fields.entries()) {
    const problem = fieldError(field, FIELDS[i]!)
    if (problem) return problem
  }
  return undefined
}

function descriptorError(spec: string): string | undefined {
  if (DESCRIPTORS.has(spec)) return undefined
  if (spec.startsWith(EVERY)) {
    const problem = durationError(spec.slice(EVERY.length))
    return problem ? `failed to parse duration ${spec}: ${problem}` : undefined
  }
  return `unrecognized descriptor: ${spec}`
}

/** Go's time.ParseDuration refusals, for the texts it gives most often. */
function durationError(text: string): string | undefined {
  if (parseGoDuration(text) !== undefined) return undefined
  const quoted = JSON.stringify(text)
  if (/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(text)) return `time: missing unit in duration ${quoted}`
  const unit = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)([^\d.]+)/.exec(text)?.[1]
  if (unit && !/^(ns|us|µs|μs|ms|s|m|h)/.test(unit)) return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`
  return `time: invalid duration ${quoted}`
}

/** A comma-separated list of ranges; empty entries are skipped, as the parser splits them away. */
function fieldError(field: string, bounds: Bounds): string | undefined {
  for (const expr of field.split(',')) {
    if (expr === '') continue
    const problem = rangeError(expr, bounds)
    if (problem) return problem
  }
  return undefined
}

type Parsed = { value: number } | { error: string }

/** Go's strconv.Atoi followed by the parser's sign check. */
function parseNumber(text: string): Parsed {
  if (!/^[+-]?\d+$/.test(text)) return { error: `failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax` }
  const n = Number(text)
  if (!Number.isSafeInteger(n)) return { error: `failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range` }
  if (n < 0) return { error: `negative number (${n}) not allowed: ${text}` }
  return { value: n }
}

function parseNumberOrName(text: string, bounds: Bounds): Parsed {
  const named = bounds.names?.[text.toLowerCase()]
  return named !== undefined ? { value: named } : parseNumber(text)
}

/** One `start[-end][/step]` or `*[/step]` (`?` stands for `*`). */
function rangeError(expr: string, bounds: Bounds): string | undefined {
  const rangeAndStep = expr.split('/')
  const lowAndHigh = rangeAndStep[0]!.split('-')
  let start = bounds.min
  let end = bounds.max
  if (lowAndHigh[0] !== '*' && lowAndHigh[0] !== '?') {
    const low = parseNumberOrName(lowAndHigh[0]!, bounds)
    if ('error' in low) return low.error
    start = end = low.value
    if (lowAndHigh.length === 2) {
      const high = parseNumberOrName(lowAndHigh[1]!, bounds)
      if ('error' in high) return high.error
      end = high.value
    } else if (lowAndHigh.length > 2) return `too many hyphens: ${expr}`
  }
  let step = 1
  if (rangeAndStep.length === 2) {
    const parsed = parseNumber(rangeAndStep[1]!)
    if ('error' in parsed) return parsed.error
    step = parsed.value
    // `N/step` means from N to the field's maximum.
    if (lowAndHigh.length === 1) end = bounds.max
  } else if (rangeAndStep.length > 2) return `too many slashes: ${expr}`
  if (start < bounds.min) return `beginning of range (${start}) below minimum (${bounds.min}): ${expr}`
  if (end > bounds.max) return `end of range (${end}) above maximum (${bounds.max}): ${expr}`
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`
  if (step === 0) return `step of range should be a positive number: ${expr}`
  return undefined
}
