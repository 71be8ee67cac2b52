/**
 * The index lists of an Indexed Job's status (completedIndexes,
 * failedIndexes): comma-separated indexes and `first-last` intervals in
 * increasing order, each below spec.completions. Worded as upstream's
 * parseIndexInterval and validateIndexesFormat word their refusals.
 */

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** An inclusive interval of indexes. */
interface Interval {
  first: number
  last: number
}

/** Go's strconv.Atoi: an optional sign and decimal digits within int64. */
function atoi(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined
  const value = BigInt(text)
  return value < INT64_MIN || value > INT64_MAX ? undefined : Number(value)
}

function parseIndex(text: string, completions: number): number | string {
  const value = atoi(text)
  if (value === undefined) return `cannot convert string to integer for index: ${JSON.stringify(text)}`
  if (value >= completions) return `too large index: ${JSON.stringify(text)}`
  return value
}

/** One `x` or `x-y` fragment, or why it is refused. */
function parseInterval(fragment: string, completions: number): Interval | string {
  const parts = fragment.split('-')
  if (parts.length > 2) return `the fragment ${JSON.stringify(fragment)} violates the requirement that an index interval can have at most two parts separated by '-'`
  const first = parseIndex(parts[0]!, completions)
  if (typeof first === 'string') return first
  if (parts.length === 1) return { first, last: first }
  const last = parseIndex(parts[1]!, completions)
  if (typeof last === 'string') return last
  if (first >= last) return `non-increasing order, previous: ${first}, current: ${last}`
  return { first, last }
}

/** Why the list is malformed, or undefined when it is well formed (an empty list is). */
export function indexListError(list: string, completions: number): string | undefined {
  if (list === '') return undefined
  let previous: number | undefined
  for (const fragment of list.split(',')) {
    const interval = parseInterval(fragment, completions)
    if (typeof interval === 'string') return interval
    if (previous !== undefined && previous >= interval.first) return `non-increasing order, previous: ${previous}, current: ${interval.first}`
    previous = interval.last
  }
  return undefined
}

/**
 * The first index both lists hold, walking both in order as upstream does; a
 * fragment that does not parse is stepped over (its format is reported apart).
 */
export function overlappingIndex(completed: string, failed: string, completions: number): number | undefined {
  if (completed === '' || failed === '') return undefined
  const completedParts = completed.split(',')
  const failedParts = failed.split(',')
  let c = 0
  let f = 0
  let cInterval = parseInterval(completedParts[0]!, completions)
  let fInterval = parseInterval(failedParts[0]!, completions)
  while (c < completedParts.length && f < failedParts.length) {
    const stepCompleted = typeof cInterval === 'string' || (typeof fInterval !== 'string' && cInterval.first <= fInterval.first)
    if (typeof cInterval !== 'string' && typeof fInterval !== 'string' && cInterval.first <= fInterval.last && fInterval.first <= cInterval.last)
      return Math.max(cInterval.first, fInterval.first)
    if (stepCompleted) {
      c++
      if (c < completedParts.length) cInterval = parseInterval(completedParts[c]!, completions)
    } else {
      f++
      if (f < failedParts.length) fInterval = parseInterval(failedParts[f]!, completions)
    }
  }
  return undefined
}
