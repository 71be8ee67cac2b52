/**
 * The name rule of each built-in resource (upstream's ValidateXName): most
 * names are DNS-1123 subdomains; namespaces are labels, services DNS-1035
 * labels, RBAC objects path segments, IPAddresses IPs in canonical form.
 */
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isValidPathSegmentName } from '../machinery/names.js'

export type NameRule = (name: string) => string[]

export const dnsSubdomainName: NameRule = isDNS1123Subdomain
export const dnsLabelName: NameRule = isDNS1123Label
export const pathSegmentName: NameRule = isValidPathSegmentName

/** Names upstream does not constrain (certificate signing requests, reviews). */
export const anyName: NameRule = () => []

/** Service names: a label that starts with a letter, so that it can be a DNS name on its own. */
export const dns1035LabelName: NameRule = isDNS1035Label

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

/** The canonical text of an IP address, or undefined when the text is not one. */
export function canonicalIP(text: string): string | undefined {
  const v4 = IPV4_RE.exec(text)
  if (v4) {
    const octets = v4.slice(1).map(Number)
    return octets.every((o) => o <= 255) ? octets.join('.') : undefined
  }
  if (!text.includes(':') || /[^0-9a-fA-F:.]/.test(text)) return undefined
  try {
    // The URL parser serializes IPv6 hosts in RFC 5952 form, which is Go's canonical form.
    return new URL(`http://[${text}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
}

/** IPAddress objects are named after the address they reserve, in canonical form. */
export const ipAddressName: NameRule = (name) => {
  const canonical = canonicalIP(name)
  if (canonical === undefined) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']
  if (canonical !== name) return [`must be in canonical form (${JSON.stringify(canonical)})`]
  return []
}
