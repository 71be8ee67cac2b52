/**
 * Rules for serving: the port, limits and time-outs that may not be
 * negative, GOAWAY, HSTS and CORS settings, and the TLS files and options
 * (upstream: ServerRunOptions.Validate, SecureServingOptions.Validate).
 */
import { regexError } from '../../../regex/re2.js'
import type { FlagName } from '../table.js'
import { INSECURE_TLS_CIPHER_SUITES, SECURE_TLS_CIPHER_SUITES, TLS_VERSIONS } from '../table/secure-serving.js'
import { oneOf, type Rule } from './rule.js'

const securePort: Rule = ({ values }) => {
  const port = values['secure-port']
  return port < 0 || port > 65535 ? [`--secure-port ${port} must be between 0 and 65535, inclusive (0 picks a free port)`] : []
}

/** The flags that may not be negative, with upstream's message for each. */
const NOT_NEGATIVE: ReadonlyArray<[FlagName, string]> = [
  ['livez-grace-period', '--livez-grace-period can not be a negative value'],
  ['max-requests-inflight', '--max-requests-inflight can not be negative value'],
  ['max-mutating-requests-inflight', '--max-mutating-requests-inflight can not be negative value'],
  ['request-timeout', '--request-timeout can not be negative value'],
  ['min-request-timeout', '--min-request-timeout can not be negative value'],
  ['storage-initialization-timeout', '--storage-initialization-timeout can not be negative value'],
  ['shutdown-delay-duration', '--shutdown-delay-duration can not be negative value'],
  ['shutdown-watch-termination-grace-period', '--shutdown-watch-termination-grace-period, if provided, can not be a negative value'],
  ['max-connection-bytes-per-sec', '--max-connection-bytes-per-sec can not be negative value'],
  ['http2-max-streams-per-connection', '--http2-max-streams-per-connection can not be negative value'],
]

const notNegative: Rule = ({ values }) => NOT_NEGATIVE.filter(([name]) => (values[name] as number) < 0).map(([, message]) => message)

const goawayChance: Rule = ({ values }) => {
  const chance = values['goaway-chance']
  return chance < 0 || chance > 0.02 ? ['--goaway-chance can not be less than 0 or greater than 0.02'] : []
}

/** With priority and fairness the two limits are summed into one, which must be positive (spec: "Limits"). */
const totalConcurrency: Rule = ({ values }) => {
  const total = values['max-requests-inflight'] + values['max-mutating-requests-inflight']
  if (!values['enable-priority-and-fairness'] || total > 0) return []
  return [
    `--max-requests-inflight (${values['max-requests-inflight']}) and --max-mutating-requests-inflight (${values['max-mutating-requests-inflight']}) must add up to a positive total concurrency limit while --enable-priority-and-fairness is true`,
  ]
}

/** RFC 6797 section 6.1: max-age=<seconds>, includeSubDomains, preload. */
const hstsDirectives: Rule = ({ values }) =>
  values['strict-transport-security-directives'].flatMap((directive) => {
    if (directive.trim() === '') return ['empty value in --strict-transport-security-directives']
    if (directive === 'includeSubDomains' || directive === 'preload') return []
    const parts = directive.split('=')
    if (parts.length === 2 && parts[0] === 'max-age') return []
    return [
      '--strict-transport-security-directives invalid, allowed values: max-age=expireTime, includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information',
    ]
  })

/** Each origin pattern must compile and be pinned to the start and end of the host, against CVE-2022-1996. */
const corsAllowedOrigins: Rule = ({ values }) =>
  values['cors-allowed-origins'].flatMap((pattern) => {
    if (pattern === '') return ['empty value in --cors-allowed-origins']
    // Origins are matched with RE2, as upstream's Go regexps: lookaround and backreferences do not compile.
    if (regexError(pattern) !== undefined) {
      return [`--cors-allowed-origins has an invalid regular expression: ${JSON.stringify(pattern)} does not compile`]
    }
    const pinnedStart = pattern.includes('^') || pattern.includes('//')
    const pinnedEnd = pattern.includes('$') || pattern.includes(':')
    if (pinnedStart && pinnedEnd) return []
    return [`--cors-allowed-origins has an invalid regular expression: ${JSON.stringify(pattern)} does not pin to start/end of host in the origin header`]
  })

const tlsFilePair: Rule = ({ values }) =>
  (values['tls-cert-file'] === '') === (values['tls-private-key-file'] === '') ? [] : ['--tls-cert-file and --tls-private-key-file must be given together']

const tlsMinVersion: Rule = ({ values }) => {
  const version = values['tls-min-version']
  return version === '' ? [] : oneOf('tls-min-version', version, TLS_VERSIONS)
}

const KNOWN_CIPHER_SUITES: ReadonlySet<string> = new Set([...SECURE_TLS_CIPHER_SUITES, ...INSECURE_TLS_CIPHER_SUITES])

const tlsCipherSuites: Rule = ({ values }) =>
  values['tls-cipher-suites'].filter((s) => !KNOWN_CIPHER_SUITES.has(s)).map((s) => `--tls-cipher-suites: Cipher suite ${s} not supported or doesn't exist`)

/** `--workers`: at least one serving process (on etcd or on the embedded store, which the workers share). */
const workers: Rule = ({ values }) => {
  const count = values['workers']
  if (count < 1) return [`--workers ${count} must be 1 or more`]
  return []
}

export const SERVING_RULES: readonly Rule[] = [
  securePort,
  workers,
  notNegative,
  goawayChance,
  totalConcurrency,
  hstsDirectives,
  corsAllowedOrigins,
  tlsFilePair,
  tlsMinVersion,
  tlsCipherSuites,
]
