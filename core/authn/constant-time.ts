/** Comparing secrets without telling by the time taken how much of a guess was right. */

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
