/**
 * JSON text to data with checkpoints (see time-slice.ts), for bodies of
 * megabytes: `JSON.parse` of 3 MiB of small objects holds the thread for
 * tens of milliseconds, while this parse yields every slice. It builds what
 * `JSON.parse` builds (last duplicate key wins in the first one's place,
 * `__proto__` an own field). Text it cannot read yields `undefined`, and
 * the caller lets `JSON.parse` say why in its words.
 */
import { jsonStringEnd, QUICK_STRING_RUN } from './json-strings.js'
import type { Checkpointed } from './time-slice.js'

/** Values built, or characters of one string scanned, between two checkpoints. */
const STEP = 1024
const STRING_RUN = 1 << 16
/** What ends a run of plain characters in a string: its quote, an escape, or a control character JSON refuses. */
const STRING_SPECIAL = /["\\\u0000-\u001f]/

type Container = { array: unknown[]; object?: undefined } | { object: Record<string, unknown>; key: string; array?: undefined }

class Unreadable extends Error {}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function setField(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

export function* parseJsonWalk(text: string): Checkpointed<{ value: unknown } | undefined> {
  try {
    return { value: yield* walk(text) }
  } catch (err) {
    if (err instanceof Unreadable) return undefined
    throw err
  }
}

/** What the parser expects next. */
const VALUE = 0
const KEY = 1
const AFTER = 2

/** A string that did not end within STRING_RUN characters: read again with checkpoints. */
const LONG = Symbol('long string')

function* walk(text: string): Checkpointed<unknown> {
  const n = text.length
  let i = 0
  const stack: Container[] = []
  let built = 0
  let state = VALUE
  let value: unknown
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++
  }

  /** Whether the string being read has an escape so far (set by scanString). */
  let escaped = false

  /**
   * Reads a string's characters from `i` up to `stop` at most, refusing
   * control characters as JSON.parse does: true with `i` at the closing
   * quote, false with `i` at or past `stop`, between two characters or
   * escapes (a `\uXXXX` is stepped over whole). The first few dozen are
   * read one by one, the rest found with the regular-expression search.
   */
  const scanString = (stop: number): boolean => {
    // A local cursor: `i` is shared with the closures, and slower to move a character at a time.
    let at = i
    const quick = Math.min(stop, at + QUICK_STRING_RUN)
    let closed = false
    while (at < quick) {
      const c = text.charCodeAt(at)
      if (c === 0x22) {
        closed = true
        break
      }
      if (c < 0x20) throw new Unreadable()
      if (c === 0x5c) {
        escaped = true
        at += text.charCodeAt(at + 1) === 0x75 /* u */ ? 6 : 2
      } else at++
    }
    while (!closed && at < stop) {
      const found = text.slice(at, stop).search(STRING_SPECIAL)
      if (found < 0) {
        at = stop
        break
      }
      at += found
      const c = text.charCodeAt(at)
      if (c === 0x22) closed = true
      else if (c < 0x20) throw new Unreadable()
      else {
        escaped = true
        at += text.charCodeAt(at + 1) === 0x75 ? 6 : 2
      }
    }
    i = at
    return closed
  }

  /** The string at `i` (its opening quote) read at once, or LONG (with `i` unmoved) when it runs past STRING_RUN characters. */
  const shortString = (): string | typeof LONG => {
    const start = i++
    escaped = false
    if (!scanString(Math.min(n, start + STRING_RUN))) {
      if (i >= n) throw new Unreadable()
      i = start
      return LONG
    }
    i++
    return unquoted(text, start, i, escaped)
  }

  /**
   * The same for a long string, with a checkpoint every STRING_RUN
   * characters. Each checkpoint falls between two characters or escapes, so
   * that an escaped string is unescaped a piece at a time from one
   * checkpoint to the next.
   */
  function* longString(): Checkpointed<string> {
    const start = i++
    escaped = false
    const cuts = [i]
    while (!scanString(Math.min(n, i + STRING_RUN))) {
      if (i >= n) throw new Unreadable()
      cuts.push(i)
      yield
    }
    i++
    if (!escaped) return text.slice(start + 1, i - 1)
    cuts.push(i - 1)
    // A surrogate pair written as two escapes may fall on either side of a cut: its halves join again below.
    const pieces: string[] = []
    for (let k = 0; k + 1 < cuts.length; k++) {
      pieces.push(unescapedPiece(text, cuts[k]!, cuts[k + 1]!))
      yield
    }
    return pieces.join('')
  }

  /** A number, `true`, `false` or `null` at `i`. */
  const scalar = (): unknown => {
    if (text.startsWith('true', i)) {
      i += 4
      return true
    }
    if (text.startsWith('false', i)) {
      i += 5
      return false
    }
    if (text.startsWith('null', i)) {
      i += 4
      return null
    }
    const start = i
    const end = numberEnd(text, i)
    if (end < 0) throw new Unreadable()
    i = end
    const n = Number(text.slice(start, end))
    // Beyond float64's range (1e400): JSON.parse's Infinity, refused where the body is parsed at once (body.ts).
    if (!Number.isFinite(n)) throw new Unreadable()
    return n
  }

  for (;;) {
    if (++built % STEP === 0) yield
    if (state === VALUE) {
      skipSpace()
      const c = text.charCodeAt(i)
      if (c === 0x7b /* { */) {
        i++
        skipSpace()
        if (text.charCodeAt(i) === 0x7d) {
          i++
          value = {}
          state = AFTER
        } else {
          stack.push({ object: {}, key: '' })
          state = KEY
        }
      } else if (c === 0x5b /* [ */) {
        i++
        skipSpace()
        if (text.charCodeAt(i) === 0x5d) {
          i++
          value = []
          state = AFTER
        } else {
          stack.push({ array: [] })
        }
      } else if (c === 0x22) {
        const s = shortString()
        value = s === LONG ? yield* longString() : s
        state = AFTER
      } else {
        value = scalar()
        state = AFTER
      }
      continue
    }
    const top = stack[stack.length - 1]
    if (state === KEY) {
      // At a key's opening quote (checked by whoever set KEY), then its colon.
      if (text.charCodeAt(i) !== 0x22 || !top?.object) throw new Unreadable()
      const s = shortString()
      top.key = s === LONG ? yield* longString() : s
      skipSpace()
      if (text.charCodeAt(i++) !== 0x3a /* : */) throw new Unreadable()
      state = VALUE
      continue
    }
    // A value is complete: put it into its container, then see what follows.
    if (!top) break
    if (top.array) top.array.push(value)
    else setField(top.object, top.key, value)
    skipSpace()
    const c = text.charCodeAt(i++)
    if (c === 0x2c /* , */) {
      if (top.object) {
        skipSpace()
        state = KEY
      } else {
        state = VALUE
      }
    } else if ((c === 0x5d && top.array) || (c === 0x7d && top.object)) {
      stack.pop()
      value = top.array ?? top.object
    } else {
      throw new Unreadable()
    }
  }
  skipSpace()
  if (i !== n) throw new Unreadable()
  return value
}

/** The text of a string token from `start` (its opening quote) to `end` (past its closing one). */
function unquoted(text: string, start: number, end: number, escaped: boolean): string {
  if (!escaped) return text.slice(start + 1, end - 1)
  try {
    return JSON.parse(text.slice(start, end)) as string
  } catch {
    throw new Unreadable()
  }
}

/** The characters of a string's text from `from` to `to` (both between escapes), unescaped. */
function unescapedPiece(text: string, from: number, to: number): string {
  try {
    return JSON.parse(`"${text.slice(from, to)}"`) as string
  } catch {
    throw new Unreadable()
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39

/** Where JSON's number grammar ends reading from `at` (-1 when there is no number there), as the longest match. */
function numberEnd(text: string, at: number): number {
  let i = at
  if (text.charCodeAt(i) === 0x2d /* - */) i++
  if (text.charCodeAt(i) === 0x30 /* 0 */) i++
  else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++
  else return -1
  if (text.charCodeAt(i) === 0x2e /* . */ && isDigit(text.charCodeAt(i + 1))) {
    i += 2
    while (isDigit(text.charCodeAt(i))) i++
  }
  const e = text.charCodeAt(i)
  if (e === 0x65 || e === 0x45) {
    let j = i + 1
    const sign = text.charCodeAt(j)
    if (sign === 0x2b || sign === 0x2d) j++
    if (isDigit(text.charCodeAt(j))) {
      i = j
      while (isDigit(text.charCodeAt(i))) i++
    }
  }
  return i
}

/**
 * Whether `text` may hold a number beyond float64's range: one needs an
 * exponent of three digits or more, or (with an exponent below 100) at least
 * 210 digits before its point, since its value is at least 10^(digits - 1 +
 * exponent) and overflow starts past 10^308. Strings match too (a digest's
 * `e123`): then overflowingNumber looks closer.
 */
const MAY_OVERFLOW = /[eE]\+?\d{3}|\d{210}/

/**
 * The first number literal of a JSON text that float64 cannot hold
 * (`1e400`, which JSON.parse makes Infinity), as written, or undefined.
 * Strings are skipped; most texts are passed over by one search.
 */
export function overflowingNumber(text: string): string | undefined {
  if (!MAY_OVERFLOW.test(text)) return undefined
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const end = jsonStringEnd(text, i + 1, text.length)
      if (end < 0) return undefined
      i = end
    } else if (c === 0x2d /* - */ || isDigit(c)) {
      const end = numberEnd(text, i)
      if (end < 0) return undefined
      const literal = text.slice(i, end)
      if (!Number.isFinite(Number(literal))) return literal
      i = end - 1
    }
  }
  return undefined
}
