/**
 * The string formats a CRD schema may name and upstream checks (the list in
 * JSONSchemaProps' documentation). Unknown formats, and formats on numbers
 * (int32, int64, float, double), are not checked, as upstream does not.
 */
import { daysInMonth } from '../machinery/civil-time.js'
import { regexTest } from '../regex/re2.js'

// Values are user input: the patterns with nested repetition run on RE2 (linear time), as upstream's Go regexps do.
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const uuidVersion = (v: string) =>
  new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${v}[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`, 'i')
/** Labels of letters, digits and inner hyphens, up to 63 characters each, dot separated. */
const HOSTNAME = '^[\\pL\\pS0-9]([\\pL\\pS0-9-]{0,61}[\\pL\\pS0-9])?(\\.[\\pL\\pS0-9]([\\pL\\pS0-9-]{0,61}[\\pL\\pS0-9])?)*\\.?$'
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const DURATION = '^(\\d+(\\.\\d+)?\\s*(ns|us|µs|ms|s|m|h|d|w|second|seconds|minute|minutes|hour|hours|day|days|week|weeks)\\s*)+$'
const BASE64 = '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/

export function isIPv4(s: string): boolean {
  return IPV4.test(s)
}

export function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false
  let text = s
  let groupsWanted = 8
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false
    text = `${text.slice(0, lastColon + 1)}0:0`
    groupsWanted = 8
  }
  const halves = text.split('::')
  if (halves.length > 2) return false
  const groups = (part: string) => (part === '' ? [] : part.split(':'))
  const head = groups(halves[0] ?? '')
  const rest = halves.length === 2 ? groups(halves[1] ?? '') : []
  if (![...head, ...rest].every((g) => HEX_GROUP.test(g))) return false
  const count = head.length + rest.length
  return halves.length === 2 ? count < groupsWanted : count === groupsWanted
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/')
  if (slash < 0) return false
  const ip = s.slice(0, slash)
  const bits = s.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bits)) return false
  const max = isIPv4(ip) ? 32 : isIPv6(ip) ? 128 : -1
  return max >= 0 && Number(bits) <= max
}

function isDate(s: string): boolean {
  const m = DATE.exec(s)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  // On the calendar itself: Date would read years 0-99 as 1900-1999.
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s)
  if (!m || !isDate(m[1] ?? '')) return false
  return Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 61
}

/** Go's url.ParseRequestURI: an absolute URI, or an absolute path. */
function isURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s)
  try {
    new URL(s)
    return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)
  } catch {
    return false
  }
}

function isISBN10(s: string): boolean {
  const digits = s.replace(/[\s-]/g, '')
  if (!/^\d{9}[\dX]$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < 10; i++) sum += (digits[i] === 'X' ? 10 : Number(digits[i])) * (10 - i)
  return sum % 11 === 0
}

function isISBN13(s: string): boolean {
  const digits = s.replace(/[\s-]/g, '')
  if (!/^\d{13}$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < 13; i++) sum += Number(digits[i]) * (i % 2 === 0 ? 1 : 3)
  return sum % 10 === 0
}

function isCreditCard(s: string): boolean {
  const digits = s.replace(/[\s-]/g, '')
  if (!/^\d{12,19}$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return sum % 10 === 0
}

function isRGBColor(s: string): boolean {
  const m = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/.exec(s)
  return m !== null && [m[1], m[2], m[3]].every((c) => Number(c) <= 255)
}

const CHECKS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isURI,
  email: (s) => EMAIL.test(s),
  hostname: (s) => s.length <= 255 && regexTest(HOSTNAME, s),
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCIDR,
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => uuidVersion('3').test(s),
  uuid4: (s) => uuidVersion('4').test(s),
  uuid5: (s) => uuidVersion('5').test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: isRGBColor,
  byte: (s) => regexTest(BASE64, s),
  password: () => true,
  date: isDate,
  duration: (s) => regexTest(DURATION, s),
  datetime: isDateTime,
  'date-time': isDateTime,
}

/** Whether a string satisfies a format; formats upstream does not check always pass. */
export function matchesFormat(format: string, value: string): boolean {
  const check = CHECKS[format]
  return check ? check(value) : true
}

export const isCheckedFormat = (format: string): boolean => format in CHECKS
