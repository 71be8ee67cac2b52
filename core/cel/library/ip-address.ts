/**
 * IP addresses and prefixes parsed as Go's net/netip parses them (strict
 * IPv4 without leading zeros, IPv6 with an optional embedded IPv4 tail),
 * printed in its canonical form (RFC 5952 for IPv6), for the IP and CIDR
 * libraries (network.ts).
 */
import { formatIPv6Groups } from '../../machinery/ip.js'

export class IPAddress {
  /** 4 bytes for IPv4, 16 for IPv6. */
  constructor(readonly bytes: Uint8Array) {}

  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6
  }

  toString(): string {
    if (this.family === 4) return [...this.bytes].join('.')
    const groups: number[] = []
    for (let i = 0; i < 16; i += 2) groups.push(((this.bytes[i] ?? 0) << 8) | (this.bytes[i + 1] ?? 0))
    return formatIPv6Groups(groups)
  }
}

function parseIPv4(text: string): Uint8Array | string {
  const parts = text.split('.')
  if (parts.length !== 4) return 'IPv4 address too short'
  const bytes = new Uint8Array(4)
  for (const [i, part] of parts.entries()) {
    if (!/^\d{1,3}$/.test(part)) return 'unexpected character'
    if (part.length > 1 && part.startsWith('0')) return 'IPv4 field has octet with leading zero'
    const n = Number(part)
    if (n > 255) return 'IPv4 field has value >255'
    bytes[i] = n
  }
  return bytes
}

function parseIPv6(text: string): Uint8Array | string {
  let groups = text
  const lastColon = text.lastIndexOf(':')
  if (text.slice(lastColon + 1).includes('.')) {
    // An embedded IPv4 tail is the last two groups.
    const v4 = parseIPv4(text.slice(lastColon + 1))
    if (typeof v4 === 'string') return v4
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16)
    groups = `${text.slice(0, lastColon + 1)}${hex(v4[0] ?? 0, v4[1] ?? 0)}:${hex(v4[2] ?? 0, v4[3] ?? 0)}`
  }
  const halves = groups.split('::')
  if (halves.length > 2) return 'multiple :: in address'
  const parse = (part: string): number[] | string => {
    if (part === '') return []
    const out: number[] = []
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return 'unexpected character'
      out.push(parseInt(g, 16))
    }
    return out
  }
  const head = parse(halves[0] ?? '')
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : []
  if (typeof head === 'string') return head
  if (typeof rest === 'string') return rest
  const known = [...head, ...rest]
  if (halves.length === 2 ? known.length > 7 : known.length !== 8) return 'address string too short'
  const all = halves.length === 2 ? [...head, ...Array<number>(8 - known.length).fill(0), ...rest] : known
  const bytes = new Uint8Array(16)
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8
    bytes[i * 2 + 1] = g & 0xff
  })
  return bytes
}

/** The address, or Go's reason it is not one. A zone (`%eth0`) is reported separately, since Kubernetes refuses it. */
export function parseIP(text: string): IPAddress | string {
  if (text.includes('%')) return 'IP address with zone value is not allowed'
  const bytes = text.includes(':') ? parseIPv6(text) : parseIPv4(text)
  if (typeof bytes === 'string') return `ParseAddr(${JSON.stringify(text)}): ${bytes}`
  const ip = new IPAddress(bytes)
  if (ip.family === 6 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return 'IPv4-mapped IPv6 address is not allowed'
  }
  return ip
}

export class CIDRPrefix {
  constructor(
    readonly ip: IPAddress,
    readonly length: number,
  ) {}

  toString(): string {
    return `${this.ip.toString()}/${this.length}`
  }

  masked(): CIDRPrefix {
    const bytes = this.ip.bytes.map((b, i) => {
      const keep = Math.max(0, Math.min(8, this.length - i * 8))
      return b & ((0xff << (8 - keep)) & 0xff)
    })
    return new CIDRPrefix(new IPAddress(bytes), this.length)
  }

  contains(ip: IPAddress): boolean {
    if (ip.family !== this.ip.family) return false
    const mine = this.masked().ip.bytes
    return new CIDRPrefix(ip, this.length).masked().ip.bytes.every((b, i) => b === mine[i])
  }
}

export function parseCIDR(text: string): CIDRPrefix | string {
  const slash = text.lastIndexOf('/')
  if (slash < 0) return `netip.ParsePrefix(${JSON.stringify(text)}): no '/'`
  const ip = parseIP(text.slice(0, slash))
  if (typeof ip === 'string') return ip
  const bits = text.slice(slash + 1)
  const max = ip.family === 4 ? 32 : 128
  if (!/^(0|[1-9]\d{0,2})$/.test(bits) || Number(bits) > max) {
    return `netip.ParsePrefix(${JSON.stringify(text)}): bad bits after slash: ${JSON.stringify(bits)}`
  }
  return new CIDRPrefix(ip, Number(bits))
}
