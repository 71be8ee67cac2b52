/**
 * Validation of standard base64 (with padding) as Go's
 * encoding/base64.StdEncoding reads it; encoding is in ../../encoding/base64.ts.
 */

const ALPHABET = /^[A-Za-z0-9+/]$/

/** The index of the first byte Go's decoder would refuse, or -1 when the text is valid. */
export function illegalBase64Index(text: string): number {
  if (text.length % 4 !== 0) {
    // Go reports the offset where the incomplete quantum starts.
    for (let i = 0; i < text.length; i++) if (!ALPHABET.test(text[i] ?? '')) return i
    return text.length - (text.length % 4)
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ''
    if (ALPHABET.test(c)) continue
    const padding = c === '=' && (i === text.length - 1 || (i === text.length - 2 && text[i + 1] === '='))
    if (!padding) return i
  }
  return -1
}
