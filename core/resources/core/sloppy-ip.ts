/**
 * IP addresses as upstream's netutils.ParseIPSloppy reads them: Go's parser
 * from before 1.17, which still takes IPv4 octets with leading zeros
 * ("010.0.0.1" is 10.0.0.1). Endpoints validate their addresses this way.
 */
import { parseIP } from './service-ranges.js'

/** `text` with the leading zeros of its dotted IPv4 octets (alone or at the tail of an IPv6 address) dropped. */
function withoutLeadingZeros(text: string): string {
  const tailStart = text.lastIndexOf(':') + 1
  const tail = text.slice(tailStart)
  if (!tail.includes('.')) return text
  const octets = tail.split('.').map((o) => (/^\d+$/.test(o) ? o.replace(/^0+(?=\d)/, '') : o))
  return text.slice(0, tailStart) + octets.join('.')
}

/** The address's bytes (4 for IPv4, 16 for IPv6), or undefined when it is none. */
export function parseIPSloppy(text: string): number[] | undefined {
  const ip = parseIP(withoutLeadingZeros(text))
  if (!ip) return undefined
  const width = ip.family === 'IPv4' ? 4 : 16
  return Array.from({ length: width }, (_, i) => Number((ip.value >> BigInt(8 * (width - 1 - i))) & 0xffn))
}
