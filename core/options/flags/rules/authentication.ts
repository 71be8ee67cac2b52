/**
 * Rules for authentication (upstream: BuiltInAuthenticationOptions.Validate,
 * RequestHeaderAuthenticationOptions.Validate, the token request and
 * external signer checks of the control-plane options). The rules that
 * need the content of --authentication-config belong to the file's loader,
 * which reads `ParsedFlags.set` to see which flags were given.
 */
import { OIDC_FLAGS as OIDC_FLAG_NAMES } from '../../../config/authentication.js'
import { featureEnabled } from '../features.js'
import type { FlagName } from '../table.js'
import { OIDC_SIGNING_ALGS } from '../table/authentication.js'
import { invalidValue, oneOf, type Rule } from './rule.js'
import { appendAll } from '../../../machinery/append-all.js'

export const WEBHOOK_VERSIONS = ['v1', 'v1beta1'] as const

const OIDC_FLAGS: readonly FlagName[] = OIDC_FLAG_NAMES

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/** The --oidc-* flags configure one JWT authenticator: an https issuer and a client ID at the least. */
const oidc: Rule = ({ values, set }) => {
  if (values['authentication-config'] !== '' || !OIDC_FLAGS.some((f) => set.has(f))) return []
  const issuer = values['oidc-issuer-url']
  if (issuer === '' || values['oidc-client-id'] === '') {
    return ['oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set']
  }
  const problems: string[] = []
  const url = parseUrl(issuer)
  if (!url) problems.push(invalidValue('oidc-issuer-url', issuer, 'must be a valid URL'))
  else if (url.protocol !== 'https:') problems.push(invalidValue('oidc-issuer-url', issuer, 'URL scheme must be https'))
  for (const alg of values['oidc-signing-algs']) appendAll(problems, oneOf('oidc-signing-algs', alg, OIDC_SIGNING_ALGS))
  return problems
}

const authenticationConfigGate: Rule = ({ values }) =>
  values['authentication-config'] !== '' && !featureEnabled(values, 'StructuredAuthenticationConfiguration')
    ? ['set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file']
    : []

const tokenWebhookVersion: Rule = ({ values }) => oneOf('authentication-token-webhook-version', values['authentication-token-webhook-version'], WEBHOOK_VERSIONS)

/** An issuer with a `:` must be a URL; none may be empty or repeated. */
const serviceAccountIssuers: Rule = ({ values }) => {
  const seen = new Set<string>()
  return values['service-account-issuer'].flatMap((issuer) => {
    if (issuer.includes(':') && !parseUrl(issuer)) return [`service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL`]
    if (issuer === '') return ['service-account-issuer should not be an empty string']
    if (seen.has(issuer)) return [`service-account-issuer ${JSON.stringify(issuer)} is already specified`]
    seen.add(issuer)
    return []
  })
}

const serviceAccountJwksUri: Rule = ({ values }) => {
  const uri = values['service-account-jwks-uri']
  if (uri === '') return []
  const url = parseUrl(uri)
  if (!url) return [`service-account-jwks-uri must be a valid URL: ${JSON.stringify(uri)}`]
  return url.protocol === 'https:' ? [] : [`service-account-jwks-uri requires https scheme, parsed as: ${url.href}`]
}

/** An external signer holds the keys, so key files may not be given beside it; and it needs its gate. */
const serviceAccountSigning: Rule = ({ values }) => {
  const problems: string[] = []
  const endpoint = values['service-account-signing-endpoint'] !== ''
  if (endpoint && (values['service-account-signing-key-file'] !== '' || values['service-account-key-file'].length > 0)) {
    problems.push(
      "can't set `--service-account-signing-key-file` and/or `--service-account-key-file` with `--service-account-signing-endpoint` (They are mutually exclusive)",
    )
  }
  if (endpoint && !featureEnabled(values, 'ExternalServiceAccountTokenSigner')) {
    problems.push('setting `--service-account-signing-endpoint` requires enabling ExternalServiceAccountTokenSigner feature gate')
  }
  if (values['service-account-signing-key-file'] !== '' && values['service-account-key-file'].length === 0) {
    problems.push('--service-account-key-file must be specified when --service-account-signing-key-file is provided')
  }
  return problems
}

/**
 * Issuing tokens needs a signer and an issuer; asking for part of it (an
 * audience, an issuer, a key) without the rest is an error, as upstream.
 * Giving none of them is allowed here: the server issues no tokens yet.
 */
const tokenRequest: Rule = ({ values }) => {
  const signer = values['service-account-signing-key-file'] !== '' || values['service-account-signing-endpoint'] !== ''
  const issuer = (values['service-account-issuer'][0] ?? '') !== ''
  const attempted = signer || issuer || values['api-audiences'].length > 0
  return attempted && !(signer && issuer)
    ? ['--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together']
    : []
}

/** A cap on token lifetimes must leave at least an hour and at most what a token may ask for. */
const maxTokenExpiration: Rule = ({ values }) => {
  const ms = values['service-account-max-token-expiration']
  if (ms === 0) return []
  return ms < 3600_000 || ms > 2 ** 32 * 1000 ? ['the service-account-max-token-expiration must be between 1 hour and 2^32 seconds'] : []
}

const REQUEST_HEADER_LISTS: readonly FlagName[] = [
  'requestheader-username-headers',
  'requestheader-uid-headers',
  'requestheader-group-headers',
  'requestheader-extra-headers-prefix',
  'requestheader-allowed-names',
]

const requestHeader: Rule = ({ values }) => {
  const problems = REQUEST_HEADER_LISTS.filter((f) => (values[f] as string[]).some((h) => h.trim() === '')).map((f) => `empty value in ${JSON.stringify(f)}`)
  if (values['requestheader-uid-headers'].length > 0 && !featureEnabled(values, 'RemoteRequestHeaderUID')) {
    problems.push('--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled')
  }
  return problems
}

const proxyClientPair: Rule = ({ values }) =>
  (values['proxy-client-cert-file'] === '') === (values['proxy-client-key-file'] === '')
    ? []
    : ['--proxy-client-cert-file and --proxy-client-key-file must be given together']

export const AUTHENTICATION_RULES: readonly Rule[] = [
  oidc,
  authenticationConfigGate,
  tokenWebhookVersion,
  serviceAccountIssuers,
  serviceAccountJwksUri,
  serviceAccountSigning,
  tokenRequest,
  maxTokenExpiration,
  requestHeader,
  proxyClientPair,
]
