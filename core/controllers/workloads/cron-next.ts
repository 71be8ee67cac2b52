/**
 * When a CronJob's schedule next comes due, as the cron library upstream
 * uses computes it (robfig/cron v3's SpecSchedule.Next and
 * ConstantDelaySchedule): the five standard fields, descriptors such as
 * `@hourly`, `@every <duration>`, in the schedule's time zone (`TZ=` or the
 * CronJob's spec.timeZone; UTC otherwise). The schedule is checked with
 * the same rules the API validates it by (core/resources/batch/cron-schedule.ts).
 * Fields are matched on the zone's wall-clock time, held in a Date's UTC
 * fields, and the answer turned back into an instant through the zone's offset.
 */
import { parseGoDuration } from '../../machinery/duration.js'
import { cronScheduleError } from '../../resources/batch/cron-schedule.js'

export interface CronSchedule {
  /** The first moment strictly after `after` the schedule fires, or undefined when none within five years. */
  next(after: Date): Date | undefined
  /** The IANA zone the schedule runs in. */
  readonly timeZone: string
}

interface Fields {
  minute: Set<number>
  hour: Set<number>
  dom: Set<number>
  month: Set<number>
  dow: Set<number>
  /** `*` or `?` without a step, in which case the other day field alone decides. */
  domStar: boolean
  dowStar: boolean
}

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
}
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']
const BOUNDS: [number, number, string[]?][] = [[0, 59], [0, 23], [1, 31], [1, 12, MONTHS], [0, 6, WEEKDAYS]]
const MINUTE_MS = 60_000

/** Parses `schedule` (with `timeZone` when the CronJob names one); throws the parser's message when it does not parse. */
export function parseCronSchedule(schedule: string, timeZone?: string): CronSchedule {
  const problem = cronScheduleError(schedule)
  if (problem) throw new Error(problem)
  let spec = schedule.trim()
  let zone = timeZone || 'UTC'
  const prefix = /^(?:CRON_)?TZ=(\S+)\s*/.exec(spec)
  if (prefix) {
    zone = prefix[1]!
    spec = spec.slice(prefix[0].length)
  }
  if (zone === 'Local' || zone === '') zone = 'UTC'
  if (spec.startsWith('@every ')) {
    const every = Math.max(1000, Math.floor((parseGoDuration(spec.slice(7)) ?? 0) / 1000) * 1000)
    return { timeZone: zone, next: (after) => new Date(Math.floor(after.getTime() / 1000) * 1000 + every) }
  }
  const fields = parseFields(DESCRIPTORS[spec] ?? spec)
  return { timeZone: zone, next: (after) => nextInZone(fields, zone, after) }
}

function parseFields(spec: string): Fields {
  const parts = spec.split(/\s+/)
  const parsed = parts.map((part, i) => parseField(part, BOUNDS[i]!))
  return {
    minute: parsed[0]!.values,
    hour: parsed[1]!.values,
    dom: parsed[2]!.values,
    month: parsed[3]!.values,
    dow: parsed[4]!.values,
    domStar: parsed[2]!.star,
    dowStar: parsed[4]!.star,
  }
}

function parseField(field: string, [min, max, names]: [number, number, string[]?]): { values: Set<number>; star: boolean } {
  const values = new Set<number>()
  let star = false
  const number = (text: string): number => {
    const named = names?.indexOf(text.toLowerCase()) ?? -1
    return named >= 0 ? named + (min === 1 ? 1 : 0) : Number(text)
  }
  for (const expr of field.split(',')) {
    if (!expr) continue
    const [range = '', stepText] = expr.split('/')
    const step = stepText === undefined ? 1 : Number(stepText)
    let start = min
    let end = max
    const wildcard = range === '*' || range === '?'
    if (!wildcard) {
      const [low = '', high] = range.split('-')
      start = end = number(low)
      if (high !== undefined) end = number(high)
      else if (stepText !== undefined) end = max
    }
    if (wildcard && step === 1) star = true
    for (let v = start; v <= end; v += step) values.add(v)
  }
  return { values, star }
}

function dayMatches(f: Fields, wall: Date): boolean {
  const dom = f.dom.has(wall.getUTCDate())
  const dow = f.dow.has(wall.getUTCDay())
  return f.domStar || f.dowStar ? dom && dow : dom || dow
}

function nextInZone(f: Fields, zone: string, after: Date): Date | undefined {
  // The first whole minute after `after`, as wall-clock time in the zone.
  let start = Math.floor(after.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS
  // A wall time repeated when clocks go back maps to an instant already passed: look on from there.
  for (let tries = 0; tries < 3; tries++) {
    const wall = nextWall(f, new Date(start + offsetMs(zone, start)))
    if (!wall) return undefined
    const instant = instantOfWall(zone, wall.getTime())
    if (instant > after.getTime()) return new Date(instant)
    start = instant + MINUTE_MS
  }
  return undefined
}

function nextWall(f: Fields, t: Date): Date | undefined {
  const yearLimit = t.getUTCFullYear() + 5
  const at = (y: number, mo: number, d = 1, h = 0, mi = 0) => new Date(Date.UTC(y, mo, d, h, mi))
  wrap: for (;;) {
    if (t.getUTCFullYear() > yearLimit) return undefined
    while (!f.month.has(t.getUTCMonth() + 1)) {
      t = at(t.getUTCFullYear(), t.getUTCMonth() + 1)
      if (t.getUTCMonth() === 0) continue wrap
    }
    while (!dayMatches(f, t)) {
      t = at(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1)
      if (t.getUTCDate() === 1) continue wrap
    }
    while (!f.hour.has(t.getUTCHours())) {
      t = at(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate(), t.getUTCHours() + 1)
      if (t.getUTCHours() === 0) continue wrap
    }
    while (!f.minute.has(t.getUTCMinutes())) {
      t = new Date(t.getTime() + MINUTE_MS)
      if (t.getUTCMinutes() === 0) continue wrap
    }
    return t
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** How far the zone's wall clock is ahead of UTC at `instant`. */
function offsetMs(zone: string, instant: number): number {
  if (zone === 'UTC') return 0
  let format = formatters.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
    formatters.set(zone, format)
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, Number(p.value)]))
  const wall = Date.UTC(parts['year']!, parts['month']! - 1, parts['day']!, parts['hour']!, parts['minute']!, parts['second']!)
  return wall - Math.floor(instant / 1000) * 1000
}

/**
 * The instant a wall-clock time of the zone names: the first of two when
 * clocks went back; one skipped when they went forward is read with the
 * offset before the change (2:30 that never was is 3:30), as Go reads it.
 */
function instantOfWall(zone: string, wall: number): number {
  const guess = wall - offsetMs(zone, wall)
  return Math.max(guess, wall - offsetMs(zone, guess))
}
