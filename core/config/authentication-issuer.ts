/**
 * Rules for a JWT authenticator's `issuer` (upstream's validateIssuer): the
 * URLs, the audiences and their match policy, the CA bundle, the egress
 * selector.
 */
import { pemDecodeAll } from '../pki/pem.js'
import { type FieldError, type FieldPath, duplicate, invalid, required } from '../machinery/field.js'
import type { IssuerConfig } from './authentication-schema.js'
import { GoUrlError, type GoUrl, parseGoUrl } from './go-url.js'
import { appendAll } from '../machinery/append-all.js'

/** upstream's validateURL: https only, no user information, query or fragment. */
function validateURL(value: string, path: FieldPath, disallowed: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = []
  if (disallowed.has(value)) {
    const list = [...disallowed].sort().join(' ')
    errs.push(invalid(path, value, `URL must not overlap with disallowed issuers: [${list}]`))
  }
  let u: GoUrl
  try {
    u = parseGoUrl(value)
  } catch (err) {
    if (!(err instanceof GoUrlError)) throw err
    return [...errs, invalid(path, value, err.message)]
  }
  if (u.scheme !== 'https') errs.push(invalid(path, value, 'URL scheme must be https'))
  if (u.userinfo !== undefined) errs.push(invalid(path, value, 'URL must not contain a username or password'))
  if (u.rawQuery) errs.push(invalid(path, value, 'URL must not contain a query'))
  if (u.fragment) errs.push(invalid(path, value, 'URL must not contain a fragment'))
  return errs
}

/** Whether DER bytes have the outer shape of an X.509 certificate: SEQUENCE { SEQUENCE, SEQUENCE, BIT STRING }. */
function looksLikeCertificate(der: Uint8Array): boolean {
  // Returns [tag, contentStart, end] of the DER element at `at`, or undefined.
  const element = (at: number, limit: number): [number, number, number] | undefined => {
    if (at + 2 > limit) return undefined
    const tag = der[at] ?? 0
    let len = der[at + 1] ?? 0
    let start = at + 2
    if (len & 0x80) {
      const n = len & 0x7f
      if (n === 0 || n > 4 || start + n > limit) return undefined
      len = 0
      for (let i = 0; i < n; i++) len = len * 256 + (der[start + i] ?? 0)
      start += n
    }
    return start + len <= limit ? [tag, start, start + len] : undefined
  }
  const outer = element(0, der.length)
  if (!outer || outer[0] !== 0x30 || outer[2] !== der.length) return false
  const tags: number[] = []
  for (let at = outer[1]; at < outer[2]; ) {
    const e = element(at, outer[2])
    if (!e) return false
    tags.push(e[0])
    at = e[2]
  }
  return tags.length === 3 && tags[0] === 0x30 && tags[1] === 0x30 && tags[2] === 0x03
}

/**
 * client-go's cert.NewPoolFromBytes: every `CERTIFICATE` block without
 * headers must parse, and there must be at least one. The parse here is
 * structural (synchronous, so every problem of the file is reported at once);
 * the connection that uses the bundle verifies it fully.
 */
function certificateBundleProblem(pem: string): string | undefined {
  let blocks: ReturnType<typeof pemDecodeAll>
  try {
    blocks = pemDecodeAll(pem)
  } catch {
    blocks = []
  }
  const certs = blocks.filter((b) => b.label === 'CERTIFICATE')
  for (const c of certs) if (!looksLikeCertificate(c.der)) return 'x509: malformed certificate'
  return certs.length ? undefined : 'data does not contain any valid RSA or ECDSA certificates'
}

export function validateIssuer(issuer: IssuerConfig, path: FieldPath, disallowedIssuers: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = []
  const urlPath = path.child('url')
  if (!issuer.url) errs.push(required(urlPath))
  else appendAll(errs, validateURL(issuer.url, urlPath, disallowedIssuers))

  const discovery = issuer.discoveryURL ?? ''
  if (discovery) {
    const discoveryPath = path.child('discoveryURL')
    if (issuer.url && issuer.url.replace(/\/+$/, '') === discovery.replace(/\/+$/, '')) {
      errs.push(invalid(discoveryPath, discovery, 'discoveryURL must be different from URL'))
    }
    // The discovery address is not an issuer, so the disallowed issuers do not apply.
    appendAll(errs, validateURL(discovery, discoveryPath, new Set()))
  }

  appendAll(errs, validateAudiences(issuer, path))

  if (issuer.certificateAuthority) {
    const problem = certificateBundleProblem(issuer.certificateAuthority)
    if (problem) errs.push(invalid(path.child('certificateAuthority'), '<omitted>', problem))
  }

  const egress = issuer.egressSelectorType
  if (egress && egress !== 'controlplane' && egress !== 'cluster') {
    errs.push(invalid(path.child('egressSelectorType'), egress, 'egress selector must be either controlplane or cluster'))
  }
  return errs
}

function validateAudiences(issuer: IssuerConfig, path: FieldPath): FieldError[] {
  const audiencesPath = path.child('audiences')
  const { audiences, audienceMatchPolicy: policy } = issuer
  if (audiences.length === 0) return [required(audiencesPath, `at least one ${String(audiencesPath)} is required`)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  audiences.forEach((audience, i) => {
    if (!audience) errs.push(required(audiencesPath.index(i)))
    if (seen.has(audience)) errs.push(duplicate(audiencesPath.index(i), audience))
    seen.add(audience)
  })
  const policyPath = path.child('audienceMatchPolicy')
  if (audiences.length > 1 && policy !== 'MatchAny') {
    errs.push(invalid(policyPath, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'))
  }
  if (audiences.length === 1 && policy && policy !== 'MatchAny') {
    errs.push(invalid(policyPath, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'))
  }
  return errs
}
