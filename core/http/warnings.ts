/**
 * The Warning headers of an answer, as upstream's warning recorder writes
 * them (apiserver's endpoints/filters/warning.go): each text once, in the
 * order it was given; past 4096 characters in all, every text is cut to 256
 * characters, and texts that come once that budget is spent again are left
 * out. A webhook or a body with thousands of unknown fields cannot make an
 * answer whose headers no client reads.
 */
import { writableHeaderValue } from './header-values.js'
import { binaryString } from '../machinery/base64.js'

/** Characters (code points) of warning text an answer carries before the texts are cut. */
export const WARNING_TOTAL_CHARACTERS = 4 * 1024
/** What each text is cut to once the total is past its budget. */
export const WARNING_ITEM_CHARACTERS = 256

function cut(text: string): { text: string; length: number } {
  const chars = Array.from(text)
  if (chars.length <= WARNING_ITEM_CHARACTERS) return { text, length: chars.length }
  return { text: chars.slice(0, WARNING_ITEM_CHARACTERS).join(''), length: WARNING_ITEM_CHARACTERS }
}

/** The texts an answer carries for `warnings`, recorded one after another as upstream's recorder takes them. */
export function recordedWarnings(warnings: readonly string[]): string[] {
  const seen = new Set<string>()
  const ordered: string[] = []
  let written: string[] = []
  let count = 0
  let truncating = false
  for (const text of warnings) {
    if (text === '' || seen.has(text)) continue
    if (truncating && count >= WARNING_TOTAL_CHARACTERS) continue
    seen.add(text)
    ordered.push(text)
    if (truncating) {
      const item = cut(text)
      count += item.length
      written.push(item.text)
      continue
    }
    const length = Array.from(text).length
    if (count + length <= WARNING_TOTAL_CHARACTERS) {
      count += length
      written.push(text)
      continue
    }
    // Over the budget: every text so far is written again, cut.
    truncating = true
    written = ordered.map((t) => cut(t).text)
    count = ordered.reduce((n, t) => n + cut(t).length, 0)
  }
  return written
}

/**
 * A header value carries bytes, not characters: text beyond Latin-1 (a field
 * name a client made up) goes out as its UTF-8 bytes, as Go's server writes it.
 */
function headerBytes(text: string): string {
  return /^[\x00-\x7f]*$/.test(text) ? text : binaryString(new TextEncoder().encode(text))
}

/**
 * `299 - "text"` as upstream's NewWarningHeader writes it: the text in
 * quotes with `"` and `\` escaped, nothing else. Go's header writer then
 * turns a CR or LF into a space; the other control characters (which Go
 * writes raw) become a space too, since the runtimes refuse to send them:
 * a field named with a DEL in it had made the answer to a stored create a 500.
 */
export function warningHeaderValue(text: string): string {
  return headerBytes(`299 - "${writableHeaderValue(text.replace(/["\\]/g, '\\$&'))}"`)
}

/** `res` with a Warning header per recorded text: `299 - "unknown field \"spec.x\""`. */
export function withWarnings(res: Response, warnings: readonly string[]): Response {
  if (warnings.length === 0) return res
  for (const text of recordedWarnings(warnings)) res.headers.append('warning', warningHeaderValue(text))
  return res
}
