/**
 * Distributed claims (OpenID Connect Core 1.0 section 5.6.2), as upstream
 * resolves them: only for the groups claim set by `claimMappings.groups.claim`,
 * only when the token lacks that claim and its `_claim_names` points to a
 * source with an `endpoint`. The endpoint answers a JWT, verified like the
 * token itself, whose claim is copied in. Upstream trusts any issuer the
 * answer names; here it must be the authenticator's own issuer, so a token
 * cannot make the server discover issuers it was never configured with.
 */
import type { EgressSelectionName } from '../../config/egress-selector.js'
import type { WebhookClient } from '../../crd/webhook-client.js'
import { issuerTarget } from './issuer-keys.js'
import { unverifiedClaims, type Verified } from './verify.js'

const FETCH_TIMEOUT_MS = 30_000

export interface DistributedClaimsConfig {
  claim: string
  issuer: string
  certificateAuthority?: string
  egress?: EgressSelectionName
  client: WebhookClient
  verify(token: string): Promise<Verified>
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Fills the claim in `claims` from its source; throws with upstream's wording when that fails. */
export async function expandDistributedClaim(config: DistributedClaimsConfig, claims: Record<string, unknown>): Promise<void> {
  const { claim } = config
  if (claim in claims) return
  const names = claims['_claim_names']
  if (names === undefined) return
  if (!isObject(names)) throw new Error('oidc: error parsing distributed claim names: the claim is not an object')
  const sources = claims['_claim_sources']
  if (sources === undefined) throw new Error('oidc: no claim sources')
  if (!isObject(sources)) throw new Error('oidc: could not parse claim sources: the claim is not an object')
  const source = names[claim]
  if (source === undefined) return
  const endpoint = typeof source === 'string' ? sources[source] : undefined
  if (!isObject(endpoint)) throw new Error(`id token _claim_names contained a source ${String(source)} missing in _claims_sources`)
  const url = endpoint['endpoint']
  // A source without an endpoint is an aggregated claim, which upstream does not read either.
  if (typeof url !== 'string' || url === '') return

  const accessToken = typeof endpoint['access_token'] === 'string' ? endpoint['access_token'] : ''
  let jwt: string
  try {
    jwt = await config.client.get(issuerTarget(url, config.certificateAuthority, config.egress), {
      headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
      timeoutMs: FETCH_TIMEOUT_MS,
    })
  } catch (err) {
    throw new Error(`while getting distributed claim ${JSON.stringify(claim)}: ${(err as Error).message}`)
  }
  jwt = jwt.trim()
  const untrusted = unverifiedClaims(jwt)
  if (!untrusted) throw new Error(`getting untrusted issuer from endpoint ${url} failed for claim ${JSON.stringify(claim)}: malformed token`)
  if (untrusted['iss'] !== config.issuer) {
    throw new Error(`verifying untrusted issuer ${String(untrusted['iss'])} failed: only the issuer ${config.issuer} is trusted`)
  }
  const verified = await config.verify(jwt)
  if ('error' in verified) throw new Error(`verify distributed claim token: ${verified.error}`)
  if (!(claim in verified.claims)) throw new Error(`jwt returned by distributed claim endpoint ${JSON.stringify(url)} did not contain claim: ${claim}`)
  claims[claim] = verified.claims[claim]
}
