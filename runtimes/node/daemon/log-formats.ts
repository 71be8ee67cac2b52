/**
 * Upstream's two log formats (component-base/logs), written from pino's
 * records: klog's text header and key=value pairs, and the JSON format's
 * `ts`/`caller`/`msg`/`v`/`err` fields. Pure functions, so that the
 * formats are tested without a process.
 */
import { MODULE_FIELD, VERBOSITY_FIELD } from '../../../core/logging/verbosity.js'

/** pino's numeric levels. */
export const PINO_WARN = 40
export const PINO_ERROR = 50

/** What pino writes for one message (its default keys, `base: null`). */
export interface PinoRecord {
  level: number
  time: number
  msg?: string
  [field: string]: unknown
}

const RESERVED = new Set(['level', 'time', 'msg', VERBOSITY_FIELD, MODULE_FIELD])

/**
 * klog's caller column: the module's source file, or klog's own `???` when
 * the message names no module. Line numbers are not tracked (1, as klog
 * writes when it cannot tell).
 */
export function callerOf(module: unknown): string {
  return typeof module === 'string' && module !== '' ? `${module}.ts:1` : '???:1'
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/** klog's header: severity letter, MMDD hh:mm:ss.uuuuuu in local time, the process id in 7 columns, the caller. */
export function klogHeader(level: number, time: number, pid: number, caller: string): string {
  const severity = level >= PINO_ERROR ? 'E' : level >= PINO_WARN ? 'W' : 'I'
  const d = new Date(time)
  const stamp = `${pad(d.getMonth() + 1, 2)}${pad(d.getDate(), 2)} ${pad(d.getHours(), 2)}:${pad(d.getMinutes(), 2)}:${pad(d.getSeconds(), 2)}.${pad(d.getMilliseconds() * 1000, 6)}`
  return `${severity}${stamp} ${String(pid).padStart(7)} ${caller}] `
}

/** A value as klog's text format writes it: strings quoted, numbers and booleans bare, the rest as JSON. */
export function klogValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value)
  if (value === null || value === undefined) return '<nil>'
  return JSON.stringify(value) ?? '<nil>'
}

/** One klog text line (with its newline) for a pino record: `I1123 17:00:00.000000   12345 file:1] "msg" key="value"`. */
export function klogLine(record: PinoRecord, pid: number): string {
  let line = klogHeader(record.level, record.time, pid, callerOf(record[MODULE_FIELD])) + JSON.stringify(record.msg ?? '')
  for (const [key, value] of Object.entries(record)) if (!RESERVED.has(key)) line += ` ${key}=${klogValue(value)}`
  return `${line}\n`
}

/**
 * The fields of upstream's JSON format for one message, but for `ts` (which
 * pino writes): `caller`, then the message's own, `v` on everything but
 * errors (upstream's zapr writes it for info messages only), `err` as is.
 */
export function jsonFields(fields: Record<string, unknown>, error: boolean): Record<string, unknown> {
  const { [MODULE_FIELD]: module, [VERBOSITY_FIELD]: v, ...rest } = fields
  return { caller: callerOf(module), ...rest, ...(error ? {} : { v: typeof v === 'number' ? v : 0 }) }
}
