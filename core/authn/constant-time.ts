/**
 * Comparing secrets without telling by the time taken how much of a guess
 * was right, and finding one among many without keying a map by the secret
 * itself (a map's lookup compares keys byte by byte and stops at the first
 * difference).
 */

import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'

const encoder = new TextEncoder()

/**
 * A string's UTF-8 bytes. A token is ASCII nearly always, and its bytes are
 * then its character codes: a loop over them costs a tenth of the encoder's
 * call for a string of some tens of characters, and it runs on every request.
 */
function utf8Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code > 0x7f) return encoder.encode(text)
    bytes[i] = code
  }
  return bytes
}

/**
 * Whether two strings are equal, looking at every character (as Go's
 * subtle.ConstantTimeCompare looks at every byte; like it, strings of
 * different lengths differ at once).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/** SHA-256 of a string's UTF-8 bytes, as lower-case hex. */
export type Sha256Hex = (text: string) => string

/** The JavaScript SHA-256, for any runtime. */
export const javascriptSha256Hex: Sha256Hex = (text) => bytesToHex(sha256(utf8Bytes(text)))

let sha256Hex = javascriptSha256Hex

/**
 * Digests secrets with the runtime's own SHA-256 from now on (Node's
 * `crypto.hash`: 0.4 µs for a token of some tens of bytes and 1.1 µs for a
 * service account's JWT, against 3.5 and 16 µs for the JavaScript one here).
 * The runtime's entry points call it; elsewhere the JavaScript one stays.
 */
export function useSha256Hex(digest: Sha256Hex): void {
  sha256Hex = digest
}

/**
 * The SHA-256 of a secret (hex): the key to file a secret under, so that a
 * lookup compares digests, which tell nothing of how close a guess was.
 * Computed here, at once: Web Crypto's digest is a job on the runtime's
 * thread pool, which for a token of some tens of bytes costs ten times the
 * hashing (a job, a copy and a promise per request; docs/benchmarks.md,
 * "The read path"), and a bearer token is digested on every request.
 */
export function secretDigest(secret: string): string {
  return sha256Hex(secret)
}
