/**
 * A string value as go-yaml v2's emitter writes it in block context, which
 * upstream's YAML answers go through (sigs.k8s.io/yaml): its style chosen
 * as the emitter chooses it, and long values folded where it folds them.
 *
 * The style: double-quoted for a string that would read as another type
 * unquoted (the caller tells), else plain where nothing in the string
 * stops a plain scalar (an indicator first, `: ` or ` #` inside, a space at
 * either end, a document marker), else single-quoted, else (a character
 * the emitter does not print, such as a tab or an astral one) double-quoted
 * with its escapes. The folding: at a space, once the line has passed
 * column 80, the rest goes on the next line at the value's indent; never at
 * the first or last character, nor before another space.
 */

import type { Checkpointed } from '../machinery/time-slice.js'

export type GoYamlStyle = 'plain' | 'single' | 'double'

/** The emitter's line width (best_width). */
const BEST_WIDTH = 80

/**
 * A character go-yaml's emitter does not print as it is (is_printable, with
 * unicode on): controls but the line feed, U+0085, surrogates (so every
 * character past U+FFFF), U+FEFF, U+FFFE and U+FFFF.
 */
const NOT_PRINTABLE = /[^\n\x20-\x7E\xA0-\uD7FF\uE000-\uFFFD]|\uFEFF/
/** The same, line breaks aside. */
const NOT_PRINTABLE_BUT_BREAKS = /[^\n\r\u0085\x20-\x7E\xA0-\uD7FF\uE000-\uFFFD]|\uFEFF/
const LINE_BREAK = /[\n\r\u0085\u2028\u2029]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/**
 * What makes the emitter's analysis refuse a plain scalar in block context:
 * an indicator first, `?`, `:` or `-` first with a blank after, a document
 * marker first, a `:` with a blank or the end after it, a `#` after a blank.
 */
const BLOCK_INDICATOR = /^[#,[\]{}&*!|>'"%@`]|^[?:-](?:[ \t]|$)|^(?:---|\.\.\.)|:(?:[ \t]|$)|[ \t]#/
/** What a double-quoted scalar escapes: a character past U+FFFF whole (its pair first), what the emitter does not print, line breaks, the BOM, `"` and `\`. */
const DOUBLE_ESCAPED = /[\uD800-\uDBFF][\uDC00-\uDFFF]|[^\x20-\x7E\xA0-\uD7FF\uE000-\uFFFD]|[\u2028\u2029\uFEFF"\\]/g
const NAMED_ESCAPES = new Map<number, string>([
  [0x00, '0'], [0x07, 'a'], [0x08, 'b'], [0x09, 't'], [0x0a, 'n'], [0x0b, 'v'], [0x0c, 'f'], [0x0d, 'r'], [0x1b, 'e'],
  [0x22, '"'], [0x5c, '\\'], [0x85, 'N'], [0xa0, '_'], [0x2028, 'L'], [0x2029, 'P'],
])

/**
 * The style go-yaml's emitter gives a string it was asked to write plain
 * (yaml_emitter_analyze_scalar and select_scalar_style, in block context,
 * not a key); undefined for a string with an unpaired surrogate, or one
 * with a line break that go-yaml writes as a literal block, which the
 * caller writes otherwise.
 */
export function goYamlStyle(value: string): GoYamlStyle | undefined {
  if (LONE_SURROGATE.test(value)) return undefined
  if (LINE_BREAK.test(value)) {
    // Asked for as a literal block, which a space before a break or at the end, or a character it does not print, rules out.
    return / [\n\r\u0085\u2028\u2029]| $/.test(value) || NOT_PRINTABLE_BUT_BREAKS.test(value) ? 'double' : undefined
  }
  if (value === '' || NOT_PRINTABLE.test(value)) return 'double'
  if (value.startsWith(' ') || value.endsWith(' ') || BLOCK_INDICATOR.test(value)) return 'single'
  return 'plain'
}

function escaped(char: string): string {
  const cp = char.codePointAt(0)!
  const name = NAMED_ESCAPES.get(cp)
  if (name !== undefined) return `\\${name}`
  const [mark, digits] = cp <= 0xff ? ['x', 2] : cp <= 0xffff ? ['u', 4] : ['U', 8]
  return `\\${mark}${cp.toString(16).toUpperCase().padStart(digits, '0')}`
}

/** The characters of `value` as the style writes them: escaped, or with its quotes doubled. No escape writes a space. */
function rendered(value: string, style: GoYamlStyle): string {
  if (style === 'double') return value.replace(DOUBLE_ESCAPED, escaped)
  return style === 'single' ? value.replaceAll("'", "''") : value
}


/** Characters of a value escaped and folded between two checkpoints. */
const CHUNK = 16 * 1024

/**
 * `value` written in `style`, its first character at `column` of its line,
 * folded lines starting at `indent`. Columns are counted in characters, as
 * the emitter counts them: a plain or single-quoted value holds none past
 * U+FFFF (those take double quotes), and a double-quoted one writes them
 * escaped. A long value is written a chunk at a time, with a checkpoint
 * after each: escaping a megabyte of quotes or tabs takes a tenth of a
 * second or more in one piece.
 */
export function* writeGoYamlScalarInSteps(value: string, style: GoYamlStyle, column: number, indent: string): Checkpointed<string> {
  const quote = style === 'single' ? "'" : style === 'double' ? '"' : ''
  const parts: string[] = [quote]
  let col = column + quote.length
  // Whether the last thing written was a space (or a fold): the emitter never folds twice in a row.
  let spaces = false
  for (let offset = 0; offset < value.length; ) {
    let end = Math.min(offset + CHUNK, value.length)
    // A pair of surrogates is one character: never cut between them.
    if (end < value.length && /[\uD800-\uDBFF]/.test(value[end - 1]!)) end++
    const text = rendered(value.slice(offset, end), style)
    // Where the text not yet in `parts` begins.
    let from = 0
    for (let start = 0; ; ) {
      const space = text.indexOf(' ', start)
      const runEnd = space < 0 ? text.length : space
      if (runEnd > start) {
        col += runEnd - start
        spaces = false
      }
      if (space < 0) break
      // No escape writes a space: the text's spaces are the value's, in order.
      const next = space + 1 < text.length ? text.charCodeAt(space + 1) : value.charCodeAt(end)
      const nextIsSpace = next === 0x20
      const first = offset === 0 && space === 0
      const isLast = end === value.length && space === text.length - 1
      const foldable = !spaces && col > BEST_WIDTH && (style === 'plain' ? !nextIsSpace : !first && !isLast && (style === 'double' || !nextIsSpace))
      if (foldable) {
        parts.push(text.slice(from, space), `\n${indent}`)
        col = indent.length
        // A double-quoted scalar keeps a space its fold would eat by escaping the one after it.
        if (style === 'double' && nextIsSpace) {
          parts.push('\\')
          col++
        }
        from = space + 1
      } else {
        col++
      }
      spaces = true
      start = space + 1
    }
    parts.push(text.slice(from))
    offset = end
    if (offset < value.length) yield
  }
  parts.push(quote)
  return parts.join('')
}
