/**
 * Go's IP.IsGlobalUnicast over a literal, the test upstream applies before
 * it proxies to a pod or a node: loopback, link-local, multicast, the
 * unspecified address and IPv4 broadcast are refused (private ranges pass),
 * and so is anything that is not an IP literal.
 */

function ipv4Octets(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  const octets = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN))
  return octets.every((o) => o >= 0 && o <= 255) ? octets : undefined
}

function v4Global([a, b, c, d]: number[]): boolean {
  if (a === 0 && b === 0 && c === 0 && d === 0) return false
  if (a === 255 && b === 255 && c === 255 && d === 255) return false
  if (a === 127) return false
  if (a! >= 224 && a! <= 239) return false
  if (a === 169 && b === 254) return false
  return true
}

/** The 16 bytes of an IPv6 literal, or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  let rest = text
  const lastColon = text.lastIndexOf(':')
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups.
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = ipv4Octets(text.slice(lastColon + 1))
    if (!v4) return undefined
    rest = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`
  }
  const halves = rest.split('::')
  if (halves.length > 2) return undefined
  const groups = (s: string) => (s === '' ? [] : s.split(':'))
  const head = groups(halves[0]!)
  const back = halves.length === 2 ? groups(halves[1]!) : []
  if (halves.length === 1 && head.length !== 8) return undefined
  if (halves.length === 2 && head.length + back.length > 7) return undefined
  const all = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - back.length).fill('0'), ...back] : head
  const bytes: number[] = []
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
    const v = parseInt(g, 16)
    bytes.push(v >> 8, v & 0xff)
  }
  return bytes
}

export function isGlobalUnicast(text: string): boolean {
  const v4 = ipv4Octets(text)
  if (v4) return v4Global(v4)
  if (!text.includes(':')) return false
  const b = ipv6Bytes(text)
  if (!b || b.length !== 16) return false
  // IPv4-mapped: judged as the IPv4 address it carries.
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return v4Global(b.slice(12))
  if (b.every((x) => x === 0)) return false
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return false
  if (b[0] === 0xff) return false
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return false
  return true
}
