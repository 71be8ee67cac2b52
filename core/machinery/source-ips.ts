/** The addresses a request came from, as upstream lists them: X-Forwarded-For, X-Real-Ip, then the peer. */
export function sourceIPs(headers: Headers, remoteAddress: string | undefined): string[] {
  const ips: string[] = []
  for (const part of (headers.get('x-forwarded-for') ?? '').split(',')) {
    const ip = part.trim()
    if (ip && isIP(ip)) ips.push(ip)
  }
  const real = headers.get('x-real-ip')?.trim()
  if (real && isIP(real) && !ips.includes(real)) ips.push(real)
  const peer = remoteAddress?.replace(/^::ffff:(?=\d+\.)/, '')
  if (peer && ips[ips.length - 1] !== peer) ips.push(peer)
  return ips
}

const isIP = (text: string): boolean => /^[\d.]+$/.test(text) ? text.split('.').length === 4 : /^[\da-fA-F:.]+$/.test(text) && text.includes(':')
