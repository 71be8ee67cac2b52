/**
 * Comparing secrets without telling by the time taken how much of a guess
 * was right, and finding one among many without keying a map by the secret
 * itself (a map's lookup compares keys byte by byte and stops at the first
 * difference).
 */

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
 */
export async function secretDigest(secret: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(secret)))
  let hex = ''
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0')
  return hex
}
