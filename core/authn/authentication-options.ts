/**
 * How the server authenticates requests, as `createApiServer` takes it
 * (`options.authentication`): the authenticators of the spec's
 * Authentication section and their settings. The daemon fills these from
 * its flags and configuration files.
 */
import type { LoadedJWTAuthenticator } from '../config/authentication.js'
import type { StaticToken } from '../config/token-file.js'
import type { ExternalJwtSigner } from '../ports.js'
import type { KeyFetchTimings } from './jwt/issuer-keys.js'

/**
 * Service-account tokens: issued by the TokenRequest subresource
 * (`serviceaccounts/<name>/token`, `kubectl create token`) and accepted as
 * bearer tokens, with legacy secret-based tokens.
 */
export interface ServiceAccountTokenOptions {
  /**
   * `--service-account-issuer`: the first names itself in the `iss` of
   * issued tokens (and is discovered at `/.well-known/openid-configuration`
   * when it is an https URL); tokens of any of them are accepted.
   * @default ['https://kubernetes.default.svc.cluster.local']
   */
  issuers?: string[]
  /**
   * The key that signs tokens (`--service-account-signing-key-file`), PEM
   * PKCS#8 (`PRIVATE KEY`), RSA (RS256) or ECDSA P-256/P-384/P-521.
   * @default an ECDSA P-256 key made at start, kept in memory
   */
  signingKey?: string
  /**
   * PEM texts of the keys that verify tokens (`--service-account-key-file`),
   * each holding one or more `PUBLIC KEY` (PKIX) or `PRIVATE KEY` (PKCS#8) blocks.
   * @default the signing key's public key
   */
  keys?: string[]
  /** `--service-account-max-token-expiration` in seconds: a longer request is shortened to it. 0: no cap. @default 0 */
  maxExpirationSeconds?: number
  /** `--service-account-extend-token-expiration`: pods' default tokens live a year and warn after the hour. @default true */
  extendExpiration?: boolean
  /** `--service-account-lookup`: a legacy token must still be held by its Secret, of a live service account. @default true */
  lookup?: boolean
  /** `--service-account-jwks-uri`, published by discovery. @default https://<advertiseAddress>:<securePort>/openid/v1/jwks */
  jwksUri?: string
  /**
   * An external signer (`--service-account-signing-endpoint`): it signs
   * issued tokens and its published keys alone verify them; not together
   * with `signingKey` or `keys`. Its lifetime bound caps `maxExpirationSeconds`
   * (a larger one stops start-up) and the extended lifetime.
   * @default none
   */
  externalSigner?: ExternalJwtSigner
}

/**
 * An authenticating proxy in front of the server (`--requestheader-*`): a
 * request whose client certificate the transport verified against the
 * front-proxy CA, with a common name in `allowedNames`, runs as the user
 * the proxy names in its headers. Header names are case-insensitive.
 */
export interface RequestHeaderOptions {
  /** Headers holding the user name, the first non-empty one wins (`--requestheader-username-headers`). */
  usernameHeaders: string[]
  /** Headers holding the groups, every value of each (`--requestheader-group-headers`). @default [] */
  groupHeaders?: string[]
  /** Headers holding the UID, the first non-empty one wins (`--requestheader-uid-headers`). @default [] */
  uidHeaders?: string[]
  /** Prefixes of headers holding extra attributes, the rest of the name being the key (`--requestheader-extra-headers-prefix`). @default [] */
  extraHeaderPrefixes?: string[]
  /** Common names a proxy certificate may have; empty allows any (`--requestheader-allowed-names`). @default [] */
  allowedNames?: string[]
  /**
   * The front-proxy CA bundle (PEM, `--requestheader-client-ca-file`), published
   * in the `extension-apiserver-authentication` ConfigMap. Verifying against it
   * is the transport's work (`ClientCertificate.verifiedByRequestHeaderCA`).
   */
  clientCA?: string
}

/** `anonymous` of AuthenticationConfiguration: anonymous requests only for these exact paths. */
export interface AnonymousOptions {
  /** Request paths (`/healthz`, `/readyz`, ...) that may be anonymous; empty: every path. */
  paths: string[]
}

export interface AuthenticationOptions {
  /**
   * Service-account tokens; `false` issues none and accepts none.
   * @default {} (issued and accepted, with a key made at start)
   */
  serviceAccounts?: ServiceAccountTokenOptions | false
  /**
   * `--api-audiences`: the audiences this API answers to. A request's
   * bearer token must be meant for one of them.
   * @default the service-account issuers
   */
  apiAudiences?: string[]
  /**
   * `--enable-bootstrap-token-auth`: Secrets of type
   * `bootstrap.kubernetes.io/token` in kube-system authenticate as
   * `system:bootstrap:<token id>`.
   * @default false
   */
  bootstrapTokens?: boolean
  /**
   * Accept client certificates that the transport verified against the
   * client CA (`--client-ca-file`): CN is the user, O the groups.
   * @default true
   */
  clientCertificates?: boolean
  /**
   * The client CA bundle (PEM, `--client-ca-file`), published in the
   * `extension-apiserver-authentication` ConfigMap for extension servers.
   */
  clientCA?: string
  /** Trust an authenticating proxy's identity headers. @default none */
  requestHeader?: RequestHeaderOptions
  /** Bearer tokens from `--token-auth-file`. @default [] */
  tokens?: StaticToken[]
  /**
   * Requests with no credential run as `system:anonymous` (`--anonymous-auth`),
   * on every path (`true`) or on the listed ones (AuthenticationConfiguration's
   * `anonymous.conditions`). As upstream, `true` is forced off while
   * authorization is AlwaysAllow; the path-limited form is kept.
   * @default true
   */
  anonymous?: boolean | AnonymousOptions
  /**
   * JWT (OIDC) authenticators, tried in order: the `jwt` list of an
   * AuthenticationConfiguration (`--authentication-config`, loaded with
   * `loadAuthenticationConfiguration`) or the one the `--oidc-*` flags make
   * (`jwtAuthenticatorFromOidcFlags`). Given (even empty), the list can be
   * replaced at run time with `ApiServer.reloadAuthenticationConfiguration`.
   * @default none
   */
  jwt?: LoadedJWTAuthenticator[]
  /** Signing algorithms JWTs may use (`--oidc-signing-algs`); HMAC and `none` are never accepted. @default ['RS256'] */
  jwtSigningAlgorithms?: string[]
  /** How often issuers' discovery and keys are fetched. @see KeyFetchTimings */
  jwtKeyFetch?: KeyFetchTimings
  /** A remote service that says who a bearer token belongs to (`--authentication-token-webhook-config-file`). */
  tokenWebhook?: TokenWebhookOptions
  /**
   * How long a bearer token the authenticators accepted is accepted again
   * without asking them (upstream's token cache, which kube-apiserver keeps
   * at ten seconds and has no flag for; core/authn/token-cache.ts). A test
   * that deletes a service account and expects its token refused at once
   * sets 0. @default 10000
   */
  tokenSuccessCacheTtlMs?: number
}

/** The token webhook: TokenReviews POSTed over HTTPS, answers cached. */
export interface TokenWebhookOptions {
  /** Where TokenReviews are POSTed: the kubeconfig cluster's `server`. */
  url: string
  /** PEM bundle trusted for the webhook's serving certificate; unset: the platform's CAs. */
  certificateAuthority?: string
  /** The name the serving certificate must carry, when not the URL's host (`tls-server-name`). */
  serverName?: string
  /** The client certificate and key (PEM) presented to the webhook (the kubeconfig's user). */
  clientCertificate?: { certificate: string; key: string }
  /** TokenReview version sent and expected (`--authentication-token-webhook-version`). @default 'v1beta1' */
  version?: 'v1' | 'v1beta1'
  /** How long answers are cached (`--authentication-token-webhook-cache-ttl`). @default 120000 */
  cacheTtlMs?: number
}
