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

export type GoYamlStyle = 'plain' | 'single' | 'double'

/** What the emitter takes for a line break, escaped in a double-quoted scalar. */
const LINE_BREAKS = '\n\r\u0085\u2028\u2029'

/** The emitter's line width (best_width). */
const BEST_WIDTH = 80

/** The characters go-yaml's emitter prints as they are (is_printable, with unicode on). */
function isPrintable(cp: number): boolean {
  return cp === 0x0a || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
}

const isBlank = (c: string | undefined): boolean => c === undefined || c === ' ' || c === '\t'

/**
 * The style go-yaml's emitter gives a string it was asked to write plain
 * (yaml_emitter_analyze_scalar and select_scalar_style, in block context,
 * not a key); undefined for a string with a line break or an unpaired
 * surrogate, or one with a line break that go-yaml writes as a literal
 * block, which the caller writes otherwise.
 */
export function goYamlStyle(value: string): GoYamlStyle | undefined {
  if (/[\uD800-\uDFFF]/.test(value.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) return undefined
  if (/[\n\r\u0085\u2028\u2029]/.test(value)) {
    // Asked for as a literal block, which a space before a break or at the end, or a character it does not print, rules out.
    return / [\n\r\u0085\u2028\u2029]| $/.test(value) || [...value].some((c) => !isPrintable(c.codePointAt(0)!) && !/[\r\u0085\u2028\u2029]/.test(c)) ? 'double' : undefined
  }
  if (value === '') return 'double'
  const chars = [...value]
  let blockIndicators = value.startsWith('---') || value.startsWith('...')
  let special = false
  let leadingSpace = false
  let trailingSpace = false
  let precededByWhitespace = true
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    const followedByWhitespace = isBlank(chars[i + 1])
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true
      else if ((c === '?' || c === ':' || c === '-') && followedByWhitespace) blockIndicators = true
    } else if (c === ':' && followedByWhitespace) blockIndicators = true
    else if (c === '#' && precededByWhitespace) blockIndicators = true
    if (!isPrintable(c.codePointAt(0)!)) special = true
    if (c === ' ') {
      if (i === 0) leadingSpace = true
      if (i === chars.length - 1) trailingSpace = true
    }
    precededByWhitespace = isBlank(c)
  }
  if (special) return 'double'
  if (leadingSpace || trailingSpace || blockIndicators) return 'single'
  return 'plain'
}

/** go-yaml's escape of a character a double-quoted scalar cannot hold as it is. */
function escaped(cp: number): string {
  const named: Record<number, string> = { 0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e', 0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P' }
  const name = named[cp]
  if (name !== undefined) return `\\${name}`
  const [mark, digits] = cp <= 0xff ? ['x', 2] : cp <= 0xffff ? ['u', 4] : ['U', 8]
  return `\\${mark}${cp.toString(16).toUpperCase().padStart(digits, '0')}`
}

/**
 * `value` written in `style`, its first character at `column` of its line
 * (counted in characters, as the emitter counts), folded lines starting at
 * `indent`.
 */
export function writeGoYamlScalar(value: string, style: GoYamlStyle, column: number, indent: string): string {
  const quote = style === 'single' ? "'" : style === 'double' ? '"' : ''
  let out = quote
  let col = column + quote.length
  let spaces = false
  const chars = [...value]
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    const cp = c.codePointAt(0)!
    if (style === 'double' && (!isPrintable(cp) || cp === 0xfeff || LINE_BREAKS.includes(c) || c === '"' || c === '\\')) {
      const text = escaped(cp)
      out += text
      col += text.length
      spaces = false
    } else if (c === ' ') {
      const foldable = !spaces && col > BEST_WIDTH && (style === 'plain' ? chars[i + 1] !== ' ' : i !== 0 && i !== chars.length - 1 && (style === 'double' || chars[i + 1] !== ' '))
      if (foldable) {
        out += `\n${indent}`
        col = indent.length
        // A double-quoted scalar keeps a space its fold would eat by escaping the one after it.
        if (style === 'double' && chars[i + 1] === ' ') {
          out += '\\'
          col++
        }
      } else {
        out += ' '
        col++
      }
      spaces = true
    } else {
      const text = style === 'single' && c === "'" ? "''" : c
      out += text
      col += text.length
      spaces = false
    }
  }
  return out + quote
}
