/**
 * Kubernetes' IP and CIDR libraries (apiserver/pkg/cel/library/ip.go and
 * cidr.go, in the environment from 1.30):
 *
 *   ip(s), isIP(s), ip.isCanonical(s), string(ip), ip.family(),
 *   ip.isUnspecified(), isLoopback(), isLinkLocalMulticast(),
 *   isLinkLocalUnicast(), isGlobalUnicast();
 *   cidr(s), isCIDR(s), string(cidr), cidr.containsIP(ip | string),
 *   cidr.containsCIDR(cidr | string), cidr.ip(), cidr.masked(), cidr.prefixLength().
 */
import type { Environment } from '@marcbachmann/cel-js'
import { CIDRPrefix, IPAddress, parseCIDR, parseIP } from './ip-address.js'

/** Receiver of `ip.isCanonical`: the library cannot name a function `ip.x`, only a method on a constant. */
class IPLibrary {}

function ip(text: string): IPAddress {
  const parsed = parseIP(text)
  if (typeof parsed === 'string') throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ${parsed}`)
  return parsed
}

function cidr(text: string): CIDRPrefix {
  const parsed = parseCIDR(text)
  if (typeof parsed === 'string') throw new Error(`network address parse error during conversion from string: ${parsed}`)
  return parsed
}

const startsWith = (a: IPAddress, prefix: string) => new CIDRPrefix(ip(prefix.split('/')[0] ?? ''), Number(prefix.split('/')[1])).contains(a)

function isLinkLocalMulticast(a: IPAddress): boolean {
  return a.family === 4 ? startsWith(a, '224.0.0.0/24') : a.bytes[0] === 0xff && ((a.bytes[1] ?? 0) & 0x0f) === 0x02
}

function isLinkLocalUnicast(a: IPAddress): boolean {
  return a.family === 4 ? startsWith(a, '169.254.0.0/16') : startsWith(a, 'fe80::/10')
}

const isUnspecified = (a: IPAddress) => a.bytes.every((b) => b === 0)
const isLoopback = (a: IPAddress) => (a.family === 4 ? a.bytes[0] === 127 : a.bytes.slice(0, 15).every((b) => b === 0) && a.bytes[15] === 1)
const isMulticast = (a: IPAddress) => (a.family === 4 ? startsWith(a, '224.0.0.0/4') : a.bytes[0] === 0xff)

function isGlobalUnicast(a: IPAddress): boolean {
  if (a.family === 4 && a.bytes.every((b) => b === 0xff)) return false
  return !isUnspecified(a) && !isLoopback(a) && !isMulticast(a) && !isLinkLocalUnicast(a)
}

export function registerNetwork(env: Environment): Environment {
  env
    .registerType('net.IP', IPAddress)
    .registerType('net.CIDR', CIDRPrefix)
    .registerType('IPLibrary', IPLibrary)
    .registerConstant('ip', 'IPLibrary', new IPLibrary())
    .registerFunction('ip(string): net.IP', ip)
    .registerFunction('isIP(string): bool', (s: string) => typeof parseIP(s) !== 'string')
    .registerFunction('IPLibrary.isCanonical(string): bool', (_l: IPLibrary, s: string) => ip(s).toString() === s)
    .registerFunction('string(net.IP): string', (a: IPAddress) => a.toString())
    .registerFunction('net.IP.family(): int', (a: IPAddress) => BigInt(a.family))
    .registerFunction('net.IP.isUnspecified(): bool', isUnspecified)
    .registerFunction('net.IP.isLoopback(): bool', isLoopback)
    .registerFunction('net.IP.isLinkLocalMulticast(): bool', isLinkLocalMulticast)
    .registerFunction('net.IP.isLinkLocalUnicast(): bool', isLinkLocalUnicast)
    .registerFunction('net.IP.isGlobalUnicast(): bool', isGlobalUnicast)
    .registerOperator('net.IP == net.IP', (a: IPAddress, b: IPAddress) => a.toString() === b.toString())
    .registerFunction('cidr(string): net.CIDR', cidr)
    .registerFunction('isCIDR(string): bool', (s: string) => typeof parseCIDR(s) !== 'string')
    .registerFunction('string(net.CIDR): string', (c: CIDRPrefix) => c.toString())
    .registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CIDRPrefix, a: IPAddress) => c.contains(a))
    .registerFunction('net.CIDR.containsIP(string): bool', (c: CIDRPrefix, s: string) => c.contains(ip(s)))
    .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CIDRPrefix, o: CIDRPrefix) => o.length >= c.length && c.contains(o.ip))
    .registerFunction('net.CIDR.containsCIDR(string): bool', (c: CIDRPrefix, s: string) => {
      const o = cidr(s)
      return o.length >= c.length && c.contains(o.ip)
    })
    .registerFunction('net.CIDR.ip(): net.IP', (c: CIDRPrefix) => c.ip)
    .registerFunction('net.CIDR.masked(): net.CIDR', (c: CIDRPrefix) => c.masked())
    .registerFunction('net.CIDR.prefixLength(): int', (c: CIDRPrefix) => BigInt(c.length))
    .registerOperator('net.CIDR == net.CIDR', (a: CIDRPrefix, b: CIDRPrefix) => a.toString() === b.toString())
  return env
}
