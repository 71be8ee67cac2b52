/**
 * The JSON forms of the scalars protobuf carries differently: bytes (base64
 * in JSON), Time and MicroTime (RFC 3339 in JSON, seconds and nanos on the
 * wire) and Duration (Go's text in JSON, nanoseconds on the wire).
 */
import { base64Decode } from '../../machinery/base64.js'
import { unixSeconds, utcSecondText } from '../../machinery/civil-time.js'
import { parseGoDuration } from '../../machinery/duration.js'
import { WireError } from './wire.js'

/** The bytes of a JSON `bytes` field. */
export function bytesFromJson(text: string, where: string): Uint8Array {
  try {
    return base64Decode(text)
  } catch {
    throw new Error(`${where}: not base64`)
  }
}

/**
 * The second's text of recent decodes: an object's times are mostly the same
 * few seconds (its creation, its managedFields entries), and a list's
 * objects share many. Bounded: emptied when full.
 */
const secondsText = new Map<number, string>()
const SECONDS_TEXT_MAX = 1024

function secondText(seconds: number): string {
  let text = secondsText.get(seconds)
  if (text === undefined) {
    if (!Number.isSafeInteger(seconds)) throw new WireError(`timestamp ${seconds} out of range`)
    text = utcSecondText(seconds)
    if (secondsText.size >= SECONDS_TEXT_MAX) secondsText.clear()
    secondsText.set(seconds, text)
  }
  return text
}

/** Unix seconds of Go's zero time, 0001-01-01T00:00:00Z. */
const GO_ZERO_SECONDS = -62_135_596_800

/** Whether a Timestamp is Go's zero time, which upstream writes as an empty message and reads back as null. */
export function isGoZeroTime(seconds: number, nanos: number): boolean {
  return seconds === GO_ZERO_SECONDS && nanos === 0
}

/** Time has second precision in JSON; MicroTime carries six fractional digits. */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const base = secondText(seconds)
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

/** The last time text read, and what it read as: an object's times mostly repeat one another. */
let lastParsedText: string | undefined
let lastParsed: readonly [number, number] = [0, 0]

export function parseTime(text: string, where: string): [seconds: number, nanos: number] {
  if (text === lastParsedText) return [lastParsed[0], lastParsed[1]]
  const parsed = parseTimeText(text, where)
  lastParsedText = text
  lastParsed = parsed
  return [parsed[0], parsed[1]]
}

function parseTimeText(text: string, where: string): [seconds: number, nanos: number] {
  const m = RFC3339.exec(text)
  if (!m) throw new Error(`${where}: not an RFC 3339 time: ${text}`)
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m
  let seconds = unixSeconds(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60)
  return [seconds, frac ? Number(frac.slice(0, 9).padEnd(9, '0')) : 0]
}

/**
 * A Go duration (`1h30m`, `1.5s`, `-300ms`, `0`) in whole nanoseconds, as
 * metav1.Duration travels; a malformed one fails the encode.
 */
export function parseDurationNanos(text: string): number {
  const ms = parseGoDuration(text)
  if (ms === undefined) throw new Error(`invalid duration ${JSON.stringify(text)}`)
  // Rounded away from zero on halves, whatever the sign.
  const ns = Math.round(Math.abs(ms) * 1e6)
  return ms < 0 ? -ns : ns
}
