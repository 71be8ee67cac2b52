/**
 * Comparing secrets without telling by the time taken how much of a guess
 * was right, and finding one among many without keying a map by the secret
 * itself (a map's lookup compares keys byte by byte and stops at the first
 * difference).
 */

import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'

const encoder = new TextEncoder()

/** Whether two strings' bytes are equal, looking at every byte (as Go's subtle.ConstantTimeCompare). */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a)
  const y = encoder.encode(b)
  if (x.length !== y.length) return false
  let diff = 0
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
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
  return bytesToHex(sha256(encoder.encode(secret)))
}
