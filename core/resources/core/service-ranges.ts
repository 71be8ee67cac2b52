/**
 * The address and port ranges Services draw from (`--service-cluster-ip-range`,
 * `--service-node-port-range`), and the in-memory record of what is taken.
 * Addresses are kept as bigints so IPv4 and IPv6 share one code path.
 */
import { formatIPv6Groups } from '../../machinery/ip.js'

export type IPFamily = 'IPv4' | 'IPv6'

export interface ParsedIP {
  family: IPFamily
  value: bigint
}

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0n
  for (const part of parts) {
    // Leading zeros are refused, as Go's strict parser does.
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined
    value = (value << 8n) | BigInt(part)
  }
  return value
}

function parseIPv6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string): number[] | undefined => {
    if (half === '') return []
    const out: number[] = []
    const pieces = half.split(':')
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIPv4(piece)
        if (v4 === undefined) return undefined
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn))
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        out.push(parseInt(piece, 16))
      } else {
        return undefined
      }
    }
    return out
  }
  const head = groups(halves[0] ?? '')
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : []
  if (!head || !tail) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail]
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n)
}

export function parseIP(text: string): ParsedIP | undefined {
  const v4 = parseIPv4(text)
  if (v4 !== undefined) return { family: 'IPv4', value: v4 }
  if (!text.includes(':')) return undefined
  const v6 = parseIPv6(text)
  return v6 === undefined ? undefined : { family: 'IPv6', value: v6 }
}

/** The canonical text of an address: dotted quads, or RFC 5952 for IPv6. */
export function formatIP(ip: ParsedIP): string {
  if (ip.family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.')
  return formatIPv6Groups(Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt(112 - 16 * i)) & 0xffffn)))
}

/** The canonical text of `text`, or undefined when it is no address. */
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text)
  return ip && formatIP(ip)
}

export interface CIDR {
  family: IPFamily
  base: bigint
  prefix: number
  text: string
}

export function parseCIDR(text: string): CIDR | undefined {
  const [addr, bits, extra] = text.split('/')
  if (addr === undefined || bits === undefined || extra !== undefined || !/^\d{1,3}$/.test(bits)) return undefined
  const ip = parseIP(addr)
  const width = ip?.family === 'IPv4' ? 32 : 128
  const prefix = Number(bits)
  if (!ip || prefix > width) return undefined
  const hostBits = BigInt(width - prefix)
  const base = (ip.value >> hostBits) << hostBits
  return { family: ip.family, base, prefix, text: `${formatIP({ family: ip.family, value: base })}/${prefix}` }
}

/** Picks a free slot of `size`, preferring the upper band above `staticBand` as upstream does, so low values stay for static requests. */
function pickFree(size: number, staticBand: number, taken: (offset: number) => boolean): number | undefined {
  const bands = staticBand > 0 && staticBand < size ? [[staticBand, size], [0, staticBand]] : [[0, size]]
  for (const [from = 0, to = 0] of bands) {
    const span = to - from
    const start = Math.floor(Math.random() * span)
    for (let i = 0; i < span; i++) {
      const offset = from + ((start + i) % span)
      if (!taken(offset)) return offset
    }
  }
  return undefined
}

export type AllocationFailure = 'allocated' | 'out-of-range' | 'full'

/**
 * The cluster IPs of one family. Offsets count from the range's first usable
 * address: the network address is never handed out, nor IPv4's broadcast.
 * Only the first 2^20 addresses of a larger range are used (the flag's rules refuse larger ones).
 */
export class IPRange {
  readonly size: number
  private readonly taken = new Set<number>()

  constructor(readonly cidr: CIDR) {
    const width = cidr.family === 'IPv4' ? 32 : 128
    const total = 1n << BigInt(width - cidr.prefix)
    const usable = cidr.family === 'IPv4' ? total - 2n : total - 1n
    this.size = Number(usable < 0n ? 0n : usable > 1048576n ? 1048576n : usable)
  }

  get family(): IPFamily {
    return this.cidr.family
  }

  /** The first usable address: the `kubernetes` Service's. */
  first(): string {
    return this.address(0)
  }

  private address(offset: number): string {
    return formatIP({ family: this.cidr.family, value: this.cidr.base + 1n + BigInt(offset) })
  }

  private offsetOf(ip: string): number | undefined {
    const parsed = parseIP(ip)
    if (!parsed || parsed.family !== this.cidr.family) return undefined
    const offset = parsed.value - this.cidr.base - 1n
    return offset >= 0n && offset < BigInt(this.size) ? Number(offset) : undefined
  }

  contains(ip: string): boolean {
    return this.offsetOf(ip) !== undefined
  }

  /** Takes `ip`; the failure says why it could not be taken. */
  allocate(ip: string): AllocationFailure | undefined {
    const offset = this.offsetOf(ip)
    if (offset === undefined) return 'out-of-range'
    if (this.taken.has(offset)) return 'allocated'
    this.taken.add(offset)
    return undefined
  }

  allocateNext(): string | undefined {
    // Upstream keeps the lowest min(max(16, size/16), 256) addresses for requested IPs.
    const band = Math.min(Math.max(16, Math.floor(this.size / 16)), 256)
    const offset = pickFree(this.size, band, (o) => this.taken.has(o))
    if (offset === undefined) return undefined
    this.taken.add(offset)
    return this.address(offset)
  }

  release(ip: string): void {
    const offset = this.offsetOf(ip)
    if (offset !== undefined) this.taken.delete(offset)
  }

  has(ip: string): boolean {
    const offset = this.offsetOf(ip)
    return offset !== undefined && this.taken.has(offset)
  }
}

export interface PortSpan {
  first: number
  last: number
}

/** The node ports, one pool for every protocol, as upstream keeps them. */
export class PortRange {
  private readonly taken = new Set<number>()

  constructor(readonly span: PortSpan) {}

  get size(): number {
    return this.span.last - this.span.first + 1
  }

  text(): string {
    return `${this.span.first}-${this.span.last}`
  }

  contains(port: number): boolean {
    return port >= this.span.first && port <= this.span.last
  }

  allocate(port: number): AllocationFailure | undefined {
    if (!this.contains(port)) return 'out-of-range'
    if (this.taken.has(port)) return 'allocated'
    this.taken.add(port)
    return undefined
  }

  allocateNext(): number | undefined {
    // Upstream keeps the lowest min(max(16, size/32), 128) ports for requested ones.
    const band = Math.min(Math.max(16, Math.floor(this.size / 32)), 128)
    const offset = pickFree(this.size, band, (o) => this.taken.has(this.span.first + o))
    if (offset === undefined) return undefined
    this.taken.add(this.span.first + offset)
    return this.span.first + offset
  }

  release(port: number): void {
    this.taken.delete(port)
  }

  has(port: number): boolean {
    return this.taken.has(port)
  }
}
