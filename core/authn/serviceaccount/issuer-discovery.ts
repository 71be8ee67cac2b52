/**
 * Service-account issuer discovery (upstream's pkg/serviceaccount/
 * openidmetadata.go and pkg/routes/openidmetadata.go): an OpenID provider
 * configuration at `/.well-known/openid-configuration` and the public keys
 * at `/openid/v1/jwks`, so that relying parties outside the cluster can
 * verify the tokens. Served only when the first issuer is an https URL.
 */
import type { PublicKeySet } from './key-set.js'
import type { VerificationKey } from './keys.js'

export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration'
export const JWKS_PATH = '/openid/v1/jwks'
const JWKS_CONTENT_TYPE = 'application/jwk-set+json'

export interface IssuerDiscovery {
  configuration(): Response
  keySet(): Response
}

/** Why the first issuer cannot be discovered, or undefined when it can (upstream's NewOpenIDMetadataProvider checks). */
export function discoveryProblem(issuer: string): string | undefined {
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    return `issuer URL is not a URL: ${issuer}`
  }
  if (url.protocol !== 'https:') return `issuer URL must use https scheme, got: ${issuer}`
  if (url.search) return `issuer URL may not include a query, got: ${issuer}`
  if (url.hash) return `issuer URL may not include a fragment, got: ${issuer}`
  return undefined
}

/** One key as go-jose writes a public JSONWebKey: use, kty, kid, crv, alg, then the numbers. */
function jwkJson(key: VerificationKey): Record<string, string> {
  const { jwk } = key
  if (jwk.kty === 'RSA') return { use: 'sig', kty: 'RSA', kid: key.kid, alg: key.alg, n: jwk.n ?? '', e: jwk.e ?? '' }
  return { use: 'sig', kty: 'EC', kid: key.kid, crv: jwk.crv ?? '', alg: key.alg, x: jwk.x ?? '', y: jwk.y ?? '' }
}

function respond(body: string, contentType: string, maxAgeSeconds: number): Response {
  return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': `public, max-age=${maxAgeSeconds}` } })
}

/**
 * The two documents. `jwksUri` is `--service-account-jwks-uri`, else
 * `https://<external address>/openid/v1/jwks`, asked each time because the
 * port may be known only once the server listens.
 */
export function issuerDiscovery(issuer: string, keySet: PublicKeySet, jwksUri: () => string): IssuerDiscovery {
  // The documents change only when the keys do (an external signer's refresh): built again then.
  let built: { keys: readonly VerificationKey[]; jwks: string; algorithms: string[] } | undefined
  const current = (): { jwks: string; algorithms: string[]; maxAgeSeconds: number } => {
    const { keys, maxAgeSeconds } = keySet.published()
    if (built?.keys !== keys) {
      built = { keys, jwks: JSON.stringify({ keys: keys.map(jwkJson) }), algorithms: [...new Set(keys.map((k) => k.alg))].sort() }
    }
    return { jwks: built.jwks, algorithms: built.algorithms, maxAgeSeconds }
  }
  return {
    configuration: () => {
      const { algorithms, maxAgeSeconds } = current()
      return respond(
        JSON.stringify({
          issuer,
          jwks_uri: jwksUri(),
          response_types_supported: ['id_token'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: algorithms,
        }),
        'application/json',
        maxAgeSeconds,
      )
    },
    keySet: () => {
      const { jwks, maxAgeSeconds } = current()
      return respond(jwks, JWKS_CONTENT_TYPE, maxAgeSeconds)
    },
  }
}
