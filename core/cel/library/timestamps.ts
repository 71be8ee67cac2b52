/**
 * A timestamp's fields in a time zone (`t.getHours('Europe/Paris')`,
 * `t.getHours('+05:30')`) and its day of the year, as cel-go reads them,
 * replacing the library's on the parsed tree as the string functions are
 * (string-builtins.ts). The library read them through the process's own
 * time zone: under a TZ with daylight saving time, `getDayOfYear()` was a
 * day short for half the year and a wall-clock time of the zone asked for
 * that falls in the process's own spring-forward gap moved an hour; and it
 * refused the fixed offsets cel-go accepts.
 *
 * cel-go takes a zone without `:` as a location name (Go's LoadLocation:
 * `UTC`, an IANA name; anything else fails with `unknown time zone NAME`),
 * and one with `:` as hours and minutes east of UTC, each read as Go's
 * Atoi reads a number (`-08:00`, `05:30`, `+14:00`; a part that is not a
 * number fails with Atoi's message). Names are those the runtime's
 * time-zone data knows, in any case (`asia/kolkata`), where Go on Linux
 * reads its zone files by exact name (docs/api.md).
 */
import type { ASTNode } from '@marcbachmann/cel-js'
import { callPricer } from '../meter-calls.js'
import { meterOf } from '../meter.js'
import { type CelType, type CheckContext, type Checker, type Evaluator, type Macro, accepts, setNodeMeta } from './macro-api.js'

type Getter = 'getDate' | 'getDayOfMonth' | 'getDayOfWeek' | 'getDayOfYear' | 'getFullYear' | 'getHours' | 'getMilliseconds' | 'getMinutes' | 'getMonth' | 'getSeconds'

const GETTERS: ReadonlySet<string> = new Set<Getter>([
  'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth', 'getSeconds',
])

/** Go's strconv.Atoi: an optional sign and decimal digits, within int64. */
function atoi(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`)
  const n = BigInt(text)
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`)
  return Number(n)
}

/** Formatters by zone name, kept for the zones a server's rules name; a bounded number of them. */
const formatters = new Map<string, Intl.DateTimeFormat>()
const MAX_FORMATTERS = 256

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (f) return f
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  } catch {
    throw new Error(`unknown time zone ${zone}`)
  }
  if (formatters.size >= MAX_FORMATTERS) formatters.clear()
  formatters.set(zone, f)
  return f
}

/** Milliseconds east of UTC of `zone` at `t`. */
function zoneOffset(t: Date, zone: string): number {
  const colon = zone.indexOf(':')
  if (colon >= 0) {
    const hours = atoi(zone.slice(0, colon))
    const minutes = atoi(zone.slice(colon + 1))
    return (zone.startsWith('-') ? hours * 60 - minutes : hours * 60 + minutes) * 60_000
  }
  // `Local` is the server's own zone in Go; this server's is taken as UTC, as the apiserver's image runs.
  if (zone === '' || zone === 'UTC' || zone === 'Local') return 0
  if (zone.includes('..') || zone.startsWith('/') || zone.startsWith('\\')) throw new Error('time: invalid location name')
  const parts: Record<string, string> = {}
  for (const p of formatterFor(zone).formatToParts(t)) parts[p.type] = p.value
  const year = Number(parts['year']) * (parts['era'] === 'BC' || parts['era'] === 'B' ? -1 : 1) + (parts['era'] === 'BC' || parts['era'] === 'B' ? 1 : 0)
  const wall = new Date(0)
  wall.setUTCFullYear(year, Number(parts['month']) - 1, Number(parts['day']))
  wall.setUTCHours(Number(parts['hour']), Number(parts['minute']), Number(parts['second']))
  return wall.getTime() - (t.getTime() - (((t.getTime() % 1000) + 1000) % 1000))
}

/** The timestamp's wall clock in `zone` (UTC without one), as a Date read through its UTC getters. */
function wallClock(t: Date, zone: string | undefined): Date {
  return zone === undefined ? t : new Date(t.getTime() + zoneOffset(t, zone))
}

function dayOfYear(d: Date): number {
  const start = new Date(0)
  start.setUTCFullYear(d.getUTCFullYear(), 0, 1)
  const day = new Date(0)
  day.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  return Math.round((day.getTime() - start.getTime()) / 86_400_000)
}

const FIELDS: Readonly<Record<Getter, (d: Date) => number>> = {
  getDate: (d) => d.getUTCDate(),
  getDayOfMonth: (d) => d.getUTCDate() - 1,
  getDayOfWeek: (d) => d.getUTCDay(),
  getDayOfYear: dayOfYear,
  getFullYear: (d) => d.getUTCFullYear(),
  getHours: (d) => d.getUTCHours(),
  getMilliseconds: (d) => d.getUTCMilliseconds(),
  getMinutes: (d) => d.getUTCMinutes(),
  getMonth: (d) => d.getUTCMonth(),
  getSeconds: (d) => d.getUTCSeconds(),
}

/** The field `name` of `t` in `zone` (UTC when absent), as cel-go reads it. */
export function timestampField(name: Getter, t: Date, zone?: string): bigint {
  return BigInt(FIELDS[name](wallClock(t, zone)))
}

interface TimestampCall extends Macro {
  readonly name: Getter
  readonly receiver: ASTNode
  readonly zone: ASTNode | undefined
}

const TIMESTAMP = 'google.protobuf.Timestamp'

const timestampCall = (name: Getter, receiver: ASTNode, zone: ASTNode | undefined, call: ASTNode): TimestampCall => ({
  name,
  receiver,
  zone,
  async: false,
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext): CelType {
    const m = macro as TimestampCall
    const target = checker.check(m.receiver, ctx)
    const zoneType = m.zone ? checker.check(m.zone, ctx) : undefined
    if (!accepts(target, TIMESTAMP) || (zoneType && !accepts(zoneType, 'string'))) {
      throw checker.createError('no_matching_overload', `found no matching overload for '${target.name}.${m.name}(${zoneType ? zoneType.name : ''})'`, call)
    }
    return checker.getType('int')
  },
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown {
    const m = macro as TimestampCall
    const target = evaluator.run(m.receiver, ctx)
    const zone = m.zone ? evaluator.run(m.zone, ctx) : undefined
    if (!(target instanceof Date) || (m.zone && typeof zone !== 'string')) throw new Error(`no such overload: '${m.name}'`)
    const meter = meterOf(ctx)
    // The call's node is charged 1 already: the rest of its price (meter-calls.ts) here.
    meter.charge(callPricer(m.name)(zone === undefined ? [target] : [target, zone], meter.remaining) - 1)
    return timestampField(m.name, target, zone as string | undefined)
  },
})

/**
 * Makes `node` (an `rcall`) cel-go's getter when it reads a timestamp's
 * field in a zone, or its day of the year; true when it did. The other
 * zone-less getters read UTC already, and a duration's `getHours()` and
 * the like are left to the library.
 */
export function replaceTimestampGetter(node: Extract<ASTNode, { op: 'rcall' }>): boolean {
  const [name, receiver, args] = node.args
  if (!GETTERS.has(name) || args.length > 1 || (args.length === 0 && name !== 'getDayOfYear')) return false
  setNodeMeta(node, 'macro', timestampCall(name as Getter, receiver, args[0] as ASTNode | undefined, node))
  setNodeMeta(node, 'async', false)
  return true
}
