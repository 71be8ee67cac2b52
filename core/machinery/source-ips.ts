import { formatIP, parseIP } from './ip.js'

/** An address as Go's net.ParseIP reads it and its String() writes it (`1.2.3.4` for `::ffff:1.2.3.4`), or undefined. */
function canonical(text: string): string | undefined {
  const ip = parseIP(text)
  return ip && formatIP(ip)
}

/**
 * The addresses a request came from, as upstream's SourceIPs lists them:
 * each address of X-Forwarded-For, then X-Real-Ip unless the chain holds it,
 * then the peer unless it ends the list. Anything that is no IP address
 * (`999.1.1.1`, `abc`, `fe80::1%eth0`) is dropped, and every address is
 * written in its canonical form, so equal addresses compare equal.
 */
export function sourceIPs(headers: Headers, remoteAddress: string | undefined): string[] {
  const ips: string[] = []
  for (const part of (headers.get('x-forwarded-for') ?? '').split(',')) {
    const ip = canonical(part.trim())
    if (ip) ips.push(ip)
  }
  const real = canonical(headers.get('x-real-ip') ?? '')
  if (real && !ips.includes(real)) ips.push(real)
  const peer = remoteAddress === undefined ? undefined : canonical(remoteAddress)
  if (peer && ips[ips.length - 1] !== peer) ips.push(peer)
  return ips
}
