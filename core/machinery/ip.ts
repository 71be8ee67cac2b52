/**
 * IP addresses and CIDR ranges, read as Go's net.ParseIP and
 * net.ParseCIDR read them (core may not use node:net). Addresses are kept
 * as bytes so that families, masks and containment are plain arithmetic.
 */

export interface IP {
  family: 4 | 6
  /** 4 or 16 bytes. */
  bytes: number[]
}

export interface Cidr {
  family: 4 | 6
  /** The network address, host bits cleared, as text: `10.0.0.0`, `fd00::`. */
  network: string
  prefix: number
  /** The address length in bits: 32 or 128. */
  bits: number
}

/** Dotted quad; as Go 1.17+, an octet with a leading zero is refused (it used to mean octal). */
function parseIPv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  const bytes: number[] = []
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined
    const n = Number(p)
    if (n > 255) return undefined
    bytes.push(n)
  }
  return bytes
}

function parseIPv6Bytes(text: string): number[] | undefined {
  let head = text
  let tail: number[] = []
  // An IPv4 address may end an IPv6 one: ::ffff:192.0.2.1
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.')) {
    const v4 = parseIPv4Bytes(text.slice(lastColon + 1))
    if (!v4 || lastColon < 0) return undefined
    tail = v4
    head = text.slice(0, lastColon + 1)
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const halves = head.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string): number[] | undefined => {
    if (half === '') return []
    const out: number[] = []
    for (const g of half.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      const n = parseInt(g, 16)
      out.push(n >> 8, n & 0xff)
    }
    return out
  }
  const before = groups(halves[0] ?? '')
  const after = halves.length === 2 ? groups(halves[1] ?? '') : []
  if (!before || !after) return undefined
  const known = before.length + after.length + tail.length
  if (halves.length === 1) return known === 16 ? [...before, ...tail] : undefined
  // `::` stands for at least one group of zeros.
  if (known > 14) return undefined
  return [...before, ...new Array<number>(16 - known).fill(0), ...after, ...tail]
}

/** An IPv4 or IPv6 address; undefined when it is neither (zones like `%eth0` are refused, as Go does). */
export function parseIP(text: string): IP | undefined {
  if (text.includes(':')) {
    const bytes = parseIPv6Bytes(text)
    if (!bytes) return undefined
    // An IPv4-mapped address counts as IPv4, as Go's To4() does.
    const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
    return mapped ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes }
  }
  const bytes = parseIPv4Bytes(text)
  return bytes ? { family: 4, bytes } : undefined
}

/** 0.0.0.0 or :: */
export function isUnspecified(ip: IP): boolean {
  return ip.bytes.every((b) => b === 0)
}

export function formatIP(ip: IP): string {
  if (ip.family === 4) return ip.bytes.join('.')
  const groups: number[] = []
  for (let i = 0; i < 16; i += 2) groups.push(((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0))
  return formatIPv6Groups(groups)
}

/** Eight 16-bit groups as RFC 5952 writes them: the first longest run of two or more zero groups becomes `::`. */
export function formatIPv6Groups(groups: readonly number[]): string {
  let bestStart = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = (part: readonly number[]): string => part.map((g) => g.toString(16)).join(':')
  if (bestStart < 0) return hex(groups)
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`
}

/** `10.0.0.0/24`, `fd00::/108`; host bits may be set (`10.0.0.1/24` names 10.0.0.0/24), as net.ParseCIDR allows. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  if (slash < 0) return undefined
  const ip = parseIP(text.slice(0, slash))
  const prefixText = text.slice(slash + 1)
  if (!ip || !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return undefined
  // A mapped IPv4 address written in IPv6 form keeps its 128-bit mask.
  const bits = text.slice(0, slash).includes(':') ? 128 : 32
  const prefix = Number(prefixText)
  if (prefix > bits) return undefined
  const bytes = bits === 128 && ip.family === 4 ? [...new Array<number>(10).fill(0), 0xff, 0xff, ...ip.bytes] : [...ip.bytes]
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8))
    bytes[i] = (bytes[i] ?? 0) & ((0xff << (8 - keep)) & 0xff)
  }
  const network: IP = bits === 32 ? { family: 4, bytes } : { family: 6, bytes }
  return { family: ip.family, network: formatIP(network), prefix, bits }
}
