/** generateName as upstream: the prefix plus five random characters from a vowel-free alphabet. */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
const RANDOM_LENGTH = 5
const MAX_NAME_LENGTH = 63

export function generateName(prefix: string): string {
  const base = prefix.length > MAX_NAME_LENGTH - RANDOM_LENGTH ? prefix.slice(0, MAX_NAME_LENGTH - RANDOM_LENGTH) : prefix
  const bytes = crypto.getRandomValues(new Uint8Array(RANDOM_LENGTH))
  let suffix = ''
  for (const b of bytes) suffix += ALPHABET[b % ALPHABET.length]
  return base + suffix
}
