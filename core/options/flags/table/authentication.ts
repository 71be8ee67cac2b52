/**
 * Authentication flags (spec: "Authentication flags"): client
 * certificates, static tokens, anonymous requests, OIDC, the token
 * webhook, the authenticating proxy and service account tokens.
 */
import { flag } from '../spec.js'

const section = 'Authentication'

export const OIDC_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const

const oidc = { section, status: 'active' } as const
const proxy = { section, status: 'active' } as const
const serviceAccounts = { section, status: 'active' } as const
const tokenWebhook = { section, status: 'active' } as const

export const AUTHENTICATION_FLAGS = [
  flag({
    name: 'anonymous-auth',
    kind: 'bool',
    default: true,
    section,
    status: 'active',
    help: 'Let requests that carry no credential through as user system:anonymous in group system:unauthenticated. A wrong credential is refused all the same. Forced off while the authorization mode is AlwaysAllow. Not together with an --authentication-config file that configures anonymous requests.',
  }),
  flag({
    name: 'api-audiences',
    kind: 'strings',
    default: [],
    ...serviceAccounts,
    help: 'Identifiers of this API, comma separated: a service account token must be bound to at least one of them. Empty with --service-account-issuer set: the issuer URLs.',
  }),
  flag({
    name: 'authentication-config',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'File of kind AuthenticationConfiguration, configuring JWT authenticators and anonymous requests (its conditions limit anonymous requests to the paths listed, also beside AlwaysAllow). Re-read when it changes: a valid new file replaces the JWT authenticators, an invalid one is logged and ignored. Needs the StructuredAuthenticationConfiguration feature gate. Not together with the --oidc-* flags when it configures JWT, nor with --anonymous-auth when it configures anonymous requests.',
  }),
  flag({
    name: 'authentication-token-webhook-cache-ttl',
    kind: 'duration',
    default: 120_000,
    ...tokenWebhook,
    help: 'How long the answers of the token webhook are cached.',
  }),
  flag({
    name: 'authentication-token-webhook-config-file',
    kind: 'string',
    default: '',
    ...tokenWebhook,
    help: 'Kubeconfig-format file of a remote service that decides who a bearer token belongs to (TokenReview).',
  }),
  flag({
    name: 'authentication-token-webhook-version',
    kind: 'string',
    default: 'v1beta1',
    ...tokenWebhook,
    help: 'Version of the authentication.k8s.io TokenReview sent to and expected from the webhook: v1 or v1beta1.',
  }),
  flag({
    name: 'client-ca-file',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'PEM bundle of the CAs trusted for client certificates: a certificate they signed (directly or through intermediates the client sends) authenticates as its CommonName, with its Organizations as groups. Re-read when the file changes. Without it, the CA generated in --cert-dir is trusted.',
  }),
  flag({
    name: 'enable-bootstrap-token-auth',
    kind: 'bool',
    default: false,
    section,
    status: 'active',
    help: "Let secrets of type 'bootstrap.kubernetes.io/token' in namespace kube-system authenticate TLS bootstrapping.",
  }),
  flag({
    name: 'oidc-ca-file',
    kind: 'string',
    default: '',
    ...oidc,
    help: "CA file that verifies the OpenID issuer's certificate; without it the host's root CAs are used.",
  }),
  flag({
    name: 'oidc-client-id',
    kind: 'string',
    default: '',
    ...oidc,
    help: 'Client ID that ID tokens must be issued for; required with --oidc-issuer-url.',
  }),
  flag({
    name: 'oidc-groups-claim',
    kind: 'string',
    default: '',
    ...oidc,
    help: 'Claim holding the user\'s groups, a string or a list of strings. Experimental.',
  }),
  flag({
    name: 'oidc-groups-prefix',
    kind: 'string',
    default: '',
    ...oidc,
    help: 'Prefix put before every group, to keep them apart from groups of other authenticators.',
  }),
  flag({
    name: 'oidc-issuer-url',
    kind: 'string',
    default: '',
    ...oidc,
    help: 'URL of the OpenID issuer whose ID tokens (JWT) are accepted; https only.',
  }),
  flag({
    name: 'oidc-required-claim',
    kind: 'keyValue',
    default: {},
    ...oidc,
    help: 'A claim=value pair the ID token must carry. Repeat the flag for more claims.',
  }),
  flag({
    name: 'oidc-signing-algs',
    kind: 'strings',
    default: ['RS256'],
    ...oidc,
    help: `Signing algorithms accepted for ID tokens, comma separated: ${OIDC_SIGNING_ALGS.join(', ')} (RFC 7518 section 3.1).`,
  }),
  flag({
    name: 'oidc-username-claim',
    kind: 'string',
    default: 'sub',
    ...oidc,
    help: "Claim used as the user name. Claims other than 'sub' are not guaranteed unique and immutable. Experimental.",
  }),
  flag({
    name: 'oidc-username-prefix',
    kind: 'string',
    default: '',
    ...oidc,
    help: "Prefix put before every user name. Unset: names from claims other than 'email' are prefixed with the issuer URL; '-' means no prefix.",
  }),
  flag({
    name: 'requestheader-allowed-names',
    kind: 'strings',
    default: [],
    ...proxy,
    help: 'Client certificate common names allowed to pass user names in headers, comma separated. Empty: any certificate that --requestheader-client-ca-file verifies.',
  }),
  flag({
    name: 'requestheader-client-ca-file',
    kind: 'string',
    default: '',
    ...proxy,
    help: 'CA bundle that must verify a client certificate before the identity in the --requestheader-username-headers is trusted; re-read when the file changes. Without it the other --requestheader-* flags have no effect. A certificate it verifies is not a client certificate user unless --client-ca-file verifies it too. Do not rely on authorization having been done for such requests.',
  }),
  flag({
    name: 'requestheader-extra-headers-prefix',
    kind: 'strings',
    default: [],
    ...proxy,
    help: 'Header prefixes that carry extra user attributes, comma separated; X-Remote-Extra- is suggested.',
  }),
  flag({
    name: 'requestheader-group-headers',
    kind: 'strings',
    default: [],
    ...proxy,
    help: 'Headers that carry the groups, comma separated; X-Remote-Group is suggested.',
  }),
  flag({
    name: 'requestheader-uid-headers',
    kind: 'strings',
    default: [],
    ...proxy,
    help: 'Headers that carry the user UID, comma separated; X-Remote-Uid is suggested. Needs the RemoteRequestHeaderUID feature gate.',
  }),
  flag({
    name: 'requestheader-username-headers',
    kind: 'strings',
    default: [],
    ...proxy,
    help: 'Headers that carry the user name, comma separated; X-Remote-User is common.',
  }),
  flag({
    name: 'service-account-extend-token-expiration',
    kind: 'bool',
    default: true,
    ...serviceAccounts,
    help: 'Extend the tokens that admission injects into pods up to one year, regardless of --service-account-max-token-expiration, to ease the move from legacy tokens to bound ones.',
  }),
  flag({
    name: 'service-account-issuer',
    kind: 'repeatedStrings',
    default: [],
    ...serviceAccounts,
    help: "Identifier written into the 'iss' claim of issued tokens: a string or a URI. Issuer discovery stays off unless it is a valid URI; an https URL that serves {issuer}/.well-known/openid-configuration is recommended. Repeat the flag for more: the first issues tokens, all are accepted.",
  }),
  flag({
    name: 'service-account-jwks-uri',
    kind: 'string',
    default: '',
    ...serviceAccounts,
    help: 'Key set URI written into the discovery document at /.well-known/openid-configuration, for when relying parties fetch keys elsewhere than from the server\'s external address.',
  }),
  flag({
    name: 'service-account-key-file',
    kind: 'repeatedStrings',
    default: [],
    ...serviceAccounts,
    help: 'PEM file of RSA or ECDSA keys (private or public) that verify service account tokens; one file may hold several keys. Repeat the flag for more files. Unset: --tls-private-key-file. Required with --service-account-signing-key-file.',
  }),
  flag({
    name: 'service-account-lookup',
    kind: 'bool',
    default: true,
    ...serviceAccounts,
    help: 'Check that a service account token still exists in storage when authenticating it.',
  }),
  flag({
    name: 'service-account-max-token-expiration',
    kind: 'duration',
    default: 0,
    ...serviceAccounts,
    help: 'Longest validity of an issued token; a token request asking for longer gets this instead, without an error.',
  }),
  flag({
    name: 'token-auth-file',
    kind: 'string',
    default: '',
    section,
    status: 'active',
    help: 'CSV file of static bearer tokens: token,user,uid,"group1,group2".',
  }),
] as const
