/**
 * cel-go's string functions that count code points (`substring`, `charAt`, `indexOf`,
 * `lastIndexOf`), run on the runtime's own UTF-16 search and slicing. A
 * search that compared the search string code point by code point at every
 * place took the length of both strings multiplied: `s.indexOf(x)` of a
 * thousand characters in a hundred thousand held the thread 0.6 s at a cost
 * of 40,000. Here a match the runtime finds is one in code points unless it
 * begins or ends between the two halves of a surrogate pair, and those are
 * skipped; a string without surrogates (most) needs no conversion at all.
 */

const SURROGATE = /[\ud800-\udfff]/

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff

/** Whether UTF-16 index `at` falls between a high and a low surrogate of `text`. */
const splitsPair = (text: string, at: number): boolean => at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at))

/** How `text` is counted: in code points, and how to go between them and UTF-16 indexes. */
interface Counted {
  readonly points: number
  unit(point: number): number
  point(unit: number): number
}

/** Whether a code point starts at UTF-16 index `i` of `text` and is a pair: it takes two units. */
const pairAt = (text: string, i: number): boolean => isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))

function counted(text: string): Counted {
  if (!SURROGATE.test(text)) return { points: text.length, unit: (p) => p, point: (u) => u }
  // A few walks of the string for each call, each of its length, and no table of it.
  let points = 0
  for (let i = 0; i < text.length; i++, points++) if (pairAt(text, i)) i++
  return {
    points,
    unit: (p) => {
      let i = 0
      for (let n = 0; n < p && i < text.length; n++, i++) if (pairAt(text, i)) i++
      return i
    },
    point: (u) => {
      let n = 0
      for (let i = 0; i < u; i++, n++) if (pairAt(text, i)) i++
      return n
    },
  }
}

/** The number of code points of `text`. */
const pointCount = (text: string): number => counted(text).points

/** cel-go's substring and substring range over code points, with its errors. */
export function substring(text: string, [start, end]: readonly bigint[]): string {
  const c = counted(text)
  const length = BigInt(c.points)
  const last = end ?? length
  if (end !== undefined && start! > end) throw new Error(`invalid substring range. start: ${start}, end: ${end}`)
  if (start! < 0n || start! > length) throw new Error(`index out of range: ${start}`)
  if (last < 0n || last > length) throw new Error(`index out of range: ${last}`)
  return text.slice(c.unit(Number(start)), c.unit(Number(last)))
}

/** Whether a match of `length` units at `at` is one in code points: it splits no surrogate pair. */
const whole = (text: string, at: number, length: number): boolean => !splitsPair(text, at) && !splitsPair(text, at + length)

/** cel-go's indexOf over code points: an empty search answers the offset; an offset outside the string is an error, even 0 of ''. */
export function indexOf(text: string, search: string, offset = 0n): bigint {
  if (search === '') return offset
  const c = counted(text)
  if (offset < 0n || offset >= BigInt(c.points)) throw new Error(`index out of range: ${offset}`)
  for (let at = text.indexOf(search, c.unit(Number(offset))); at >= 0; at = text.indexOf(search, at + 1)) {
    if (whole(text, at, search.length)) return BigInt(c.point(at))
  }
  return -1n
}

/** cel-go's lastIndexOf over code points: from the offset (the last code point when none) backwards. */
export function lastIndexOf(text: string, search: string, offset?: bigint): bigint {
  const c = counted(text)
  if (search === '') return offset ?? BigInt(c.points)
  const from = offset ?? BigInt(c.points - 1)
  if (from < 0n || from >= BigInt(c.points)) throw new Error(`index out of range: ${from}`)
  const start = Math.min(Number(from), c.points - pointCount(search))
  if (start < 0) return -1n
  for (let at = text.lastIndexOf(search, c.unit(start)); at >= 0; at = at === 0 ? -1 : text.lastIndexOf(search, at - 1)) {
    if (whole(text, at, search.length)) return BigInt(c.point(at))
  }
  return -1n
}

/** cel-go's charAt: the code point at `index`, '' at the end, an error past it. */
export function charAt(text: string, index: bigint): string {
  const c = counted(text)
  if (index < 0n || index > BigInt(c.points)) throw new Error(`index out of range: ${index}`)
  if (index === BigInt(c.points)) return ''
  const at = c.unit(Number(index))
  return text.slice(at, pairAt(text, at) ? at + 2 : at + 1)
}
