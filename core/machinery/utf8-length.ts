/**
 * A string's size in UTF-8 counted from its UTF-16 code units, without
 * encoding it: a megabyte of text is not copied to learn its size.
 */

/** The length of `text` encoded as UTF-8 (a lone surrogate becomes U+FFFD, 3 bytes, as TextEncoder writes it). */
export function utf8Length(text: string): number {
  return utf8LengthUpTo(text, Infinity)
}

/**
 * utf8Length(text) when it is at most `limit`, else some number above
 * `limit`: a size checked against a limit is not counted past it (a text of
 * megabytes is counted in milliseconds).
 */
export function utf8LengthUpTo(text: string, limit: number): number {
  // Every UTF-16 unit takes at least one byte.
  if (text.length > limit) return text.length
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    if (bytes > limit) return bytes
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}
