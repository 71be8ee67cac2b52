/**
 * Calendar arithmetic for API timestamps without JavaScript's Date, which
 * reads years 0-99 as 1900-1999 (`Date.UTC(1, 0, 1)` is 1901) and writes
 * years past 9999 with a sign and six digits. metav1.Time and MicroTime
 * cover every year Go's time package formats with four digits, 0001 to
 * 9999 in practice (Go's zero time is 0001-01-01T00:00:00Z), and must come
 * back from every codec exactly as written.
 */

const SECONDS_PER_DAY = 86_400

/** Days from 1970-01-01 to the given day of the proleptic Gregorian calendar (any year). */
export function daysFromCivil(year: number, month: number, day: number): number {
  // Years counted from March, so that the leap day ends a year: eras of 400 years repeat exactly.
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/** The calendar day `days` after 1970-01-01 (negative: before). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365)
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const mp = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

const isLeap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

/** The number of days of a month (1-12) in a year, leap days included. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** Unix seconds of a UTC wall-clock time. */
export function unixSeconds(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  return daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))

/** A year as Go's time.Format writes `2006`: four digits at least, a minus sign before years below zero. */
function goYear(year: number): string {
  const digits = String(Math.abs(year)).padStart(4, '0')
  return year < 0 ? `-${digits}` : digits
}

/** `2006-01-02T15:04:05` of Unix seconds in UTC (no fraction, no zone), as Go formats it. */
export function utcSecondText(seconds: number): string {
  const days = Math.floor(seconds / SECONDS_PER_DAY)
  const inDay = seconds - days * SECONDS_PER_DAY
  const { year, month, day } = civilFromDays(days)
  const hour = Math.floor(inDay / 3600)
  const minute = Math.floor((inDay % 3600) / 60)
  return `${goYear(year)}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(inDay % 60)}`
}
