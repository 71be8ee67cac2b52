/**
 * Which IP family an address or range belongs to, read as upstream's
 * netutils reads it (sloppily: IPv4 octets may carry leading zeros), and
 * upstream's dual-stack test for a list: every entry parses, and both
 * families are present. An IPv4-mapped IPv6 address counts as IPv4, as Go's
 * `To4()` sees it.
 */
import { parseIPSloppy } from './sloppy-ip.js'

export type Family = 'IPv4' | 'IPv6'

function familyOfBytes(bytes: number[]): Family {
  if (bytes.length === 4) return 'IPv4'
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  return mapped ? 'IPv4' : 'IPv6'
}

/** The family of an address, or undefined when it is none. */
export function ipFamily(text: string): Family | undefined {
  const bytes = parseIPSloppy(text)
  return bytes ? familyOfBytes(bytes) : undefined
}

/** The family of a CIDR as ParseCIDRSloppy reads it (an address, `/`, a prefix length that fits), or undefined. */
export function cidrFamily(text: string): Family | undefined {
  const slash = text.indexOf('/')
  if (slash < 0) return undefined
  const bytes = parseIPSloppy(text.slice(0, slash))
  const bits = text.slice(slash + 1)
  if (!bytes || !/^\d+$/.test(bits) || Number(bits) > bytes.length * 8) return undefined
  return familyOfBytes(bytes)
}

/**
 * netutils' IsDualStack*Strings: `{ dual }` when every entry parses (true
 * with one of each family), else `{ unparsed }`, the index of the first that
 * does not.
 */
export function dualStack(values: readonly string[], family: (text: string) => Family | undefined): { dual: boolean; unparsed?: number } {
  const families = new Set<Family>()
  for (const [i, value] of values.entries()) {
    const f = family(value)
    if (!f) return { dual: false, unparsed: i }
    families.add(f)
  }
  return { dual: families.size === 2 }
}
