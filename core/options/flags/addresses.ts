/**
 * Network values on the command line: an IP address, a comma list of
 * CIDR ranges (`--service-cluster-ip-range`), and a port range
 * (`--service-node-port-range`, upstream's utilnet.PortRange syntax).
 */
import { type Cidr, parseCidr, parseIP } from '../../machinery/ip.js'
import { bad, ok, type Parsed } from './values.js'

/** An IP address; blank means unset, as pflag's IP flag allows. */
export function parseIPAddress(text: string): Parsed<string> {
  const value = text.trim()
  if (value === '') return ok('')
  return parseIP(value) ? ok(value) : bad(`failed to parse IP: ${JSON.stringify(text)}`)
}

/** Comma-separated CIDRs; how many and of which family is for the rules to say. */
export function parseCidrList(text: string): Parsed<Cidr[]> {
  if (text.trim() === '') return ok([])
  const cidrs: Cidr[] = []
  for (const entry of text.split(',')) {
    const cidr = parseCidr(entry.trim())
    if (!cidr) return bad(`${JSON.stringify(entry.trim())} is not a valid CIDR`)
    cidrs.push(cidr)
  }
  return ok(cidrs)
}

/** Inclusive at both ends. */
export interface PortRange {
  first: number
  last: number
}

export function formatPortRange(range: PortRange | null): string {
  return range ? `${range.first}-${range.last}` : ''
}

function atoi(text: string): number | string {
  return /^[+-]?\d+$/.test(text) ? Number(text) : `strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`
}

/**
 * `N1-N2` (also `N` alone and upstream's `N1+count`); blank means unset.
 * Ports run from 1 to 65535 and the range may not run backwards.
 */
export function parsePortRange(text: string): Parsed<PortRange | null> {
  const value = text.trim()
  if (value === '') return ok(null)
  const hyphen = value.indexOf('-')
  const plus = value.indexOf('+')
  if (hyphen >= 0 && plus >= 0) return bad(`unable to parse port range: ${value}`)
  const sep = hyphen >= 0 ? hyphen : plus
  const low = atoi(sep < 0 ? value : value.slice(0, sep))
  if (typeof low === 'string') return bad(low)
  let high = low
  if (sep >= 0) {
    const other = atoi(value.slice(sep + 1))
    if (typeof other === 'string') return bad(other)
    high = plus >= 0 ? low + other : other
  }
  if (low > 65535 || high > 65535) return bad(`the port range cannot be greater than 65535: ${value}`)
  if (high < low) return bad(`end port cannot be less than start port: ${value}`)
  if (low < 1) return bad(`the port range must start at 1 or above: ${value}`)
  return ok({ first: low, last: high })
}
