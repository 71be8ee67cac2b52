/**
 * Go's strconv.ParseInt and ParseUint in base 10 for 64 bits, read into a
 * BigInt so no digit is lost past 2^53, and refused with Go's words
 * (`strconv.ParseInt: parsing "x": invalid syntax`, `... value out of
 * range`): query parameters and resource versions are read so upstream.
 */

/** Go's *strconv.NumError: which function, the text it was given, and why. */
export class GoNumError extends Error {
  constructor(
    readonly func: 'ParseInt' | 'ParseUint',
    readonly text: string,
    readonly reason: 'invalid syntax' | 'value out of range',
  ) {
    super(`strconv.${func}: parsing ${goStrconvQuote(text)}: ${reason}`)
    this.name = 'GoNumError'
  }
}

/**
 * What Go's strconv.Quote writes escaped: the quote, the backslash, and every
 * rune unicode.IsPrint refuses (all but letters, marks, numbers, punctuation,
 * symbols and the ASCII space: control and format characters, other spaces
 * such as U+00A0, unassigned code points). A lone surrogate is matched too:
 * Go's string would hold U+FFFD there (JSON's decoder and UTF-8 put it so).
 */
const QUOTED = /["\\]|[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/gu
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\v': '\\v' }

/** Go's escape of one rune it does not print: `\x01` below U+0020 and for DEL, `\u200b` up to U+FFFF, `\U0001d173` past it. */
function goEscape(char: string): string {
  const short = SHORT_ESCAPES[char]
  if (short) return short
  const code = char.codePointAt(0)!
  if (code >= 0xd800 && code <= 0xdfff) return '\ufffd'
  const hex = code.toString(16)
  if (code < 0x20 || code === 0x7f) return `\\x${hex.padStart(2, '0')}`
  return code < 0x10000 ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`
}

/**
 * Go's strconv.Quote (and `%q` of a string): `\n`, `\a`, `\x7f`, `\u200b`,
 * not JSON's `\u0007`; printable text beyond ASCII kept as it is, as Go
 * keeps it. The escapes are made by the engine's own scan, not a character
 * at a time (0.6 s on a string of 3 million).
 */
export function goStrconvQuote(text: string): string {
  return `"${text.replace(QUOTED, goEscape)}"`
}

const UINT64_MAX = 2n ** 64n - 1n
const INT64_CUTOFF = 2n ** 63n

/**
 * The digits of `digits` as Go's ParseUint scans them: the first byte that is
 * not a digit is a syntax error, unless the value overflowed before it.
 */
function scanUint64(digits: string): bigint | 'invalid syntax' | 'value out of range' {
  if (digits === '') return 'invalid syntax'
  let n = 0n
  for (let i = 0; i < digits.length; i++) {
    const d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return 'invalid syntax'
    n = n * 10n + BigInt(d)
    if (n > UINT64_MAX) return 'value out of range'
  }
  return n
}

/** strconv.ParseUint(text, 10, 64). */
export function parseGoUint64(text: string): bigint {
  const n = scanUint64(text)
  if (typeof n === 'string') throw new GoNumError('ParseUint', text, n)
  return n
}

/** strconv.ParseInt(text, 10, 64): an optional sign, then decimal digits. */
export function parseGoInt64(text: string): bigint {
  if (text === '') throw new GoNumError('ParseInt', text, 'invalid syntax')
  const negative = text[0] === '-'
  const n = scanUint64(text[0] === '+' || negative ? text.slice(1) : text)
  if (n === 'invalid syntax') throw new GoNumError('ParseInt', text, n)
  if (n === 'value out of range' || (negative ? n > INT64_CUTOFF : n >= INT64_CUTOFF)) throw new GoNumError('ParseInt', text, 'value out of range')
  return negative ? -n : n
}
