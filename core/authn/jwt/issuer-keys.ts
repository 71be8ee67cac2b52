/**
 * The signing keys of one OIDC issuer: discovery (`{issuer}/.well-known/openid-configuration`
 * or the configured discoveryURL), then its `jwks_uri`, fetched through the
 * runtime's client trusting the issuer's CA. As upstream, the server never
 * waits for an issuer: until discovery succeeds (retried in the background)
 * tokens of that issuer are refused. Afterwards the key set is fetched again
 * periodically and when a token names a key id it does not know, at most
 * once per `minRefreshIntervalMs` so that forged key ids cannot make the
 * server hammer the issuer.
 */
import type { EgressSelectionName } from '../../config/egress-selector.js'
import { importJWK, type JWK } from 'jose'
import type { WebhookClient, WebhookTarget } from '../../crd/webhook-client.js'
import { parseJsonInSlices } from '../../machinery/json-in-slices.js'
import type { Logger } from '../../logging/logger.js'

/** How often keys are fetched. */
export interface KeyFetchTimings {
  /** Wait between failed discovery attempts (upstream polls every 10 s). @default 10000 */
  retryMs?: number
  /** Least time between two fetches caused by unknown key ids. @default 10000 */
  minRefreshIntervalMs?: number
  /** The key set is fetched again this often, so removed keys stop verifying. @default 3600000 */
  refreshPeriodMs?: number
}

export interface IssuerKeysConfig {
  issuerUrl: string
  discoveryUrl?: string
  /** PEM bundle trusted for the issuer's connections; unset: the platform's CAs. */
  certificateAuthority?: string
  /** The egress selection of the issuer's connections (`egressSelectorType`); unset: dialled directly. */
  egress?: EgressSelectionName
  client: WebhookClient
  logger: Logger
  timings?: KeyFetchTimings
}

const FETCH_TIMEOUT_MS = 30_000
/** A key set larger than this is not an issuer's: it is refused rather than imported. */
const MAX_KEYS = 100
/**
 * A discovery document or key set larger than this is refused unread:
 * a hundred keys with certificate chains fit many times over, and every
 * refetch (one an unknown key id may cause every ten seconds) parses the
 * whole text on the serving thread (a 54 MB key set stalled it 1.2 s).
 */
const MAX_ISSUER_DOCUMENT_BYTES = 4 * 1024 * 1024

type VerifyKey = Awaited<ReturnType<typeof importJWK>>

/** The target of one GET, trusting the issuer's CA (the port takes a caBundle as base64 of PEM), over the issuer's egress. */
export function issuerTarget(url: string, certificateAuthority: string | undefined, egress?: EgressSelectionName): WebhookTarget {
  return { url, ...(certificateAuthority ? { caBundle: btoa(certificateAuthority) } : {}), ...(egress ? { egress } : {}) }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export class IssuerKeys {
  private keys: JWK[] | undefined
  private readonly imported = new Map<string, Promise<VerifyKey>>()
  private jwksUri: string | undefined
  private lastOnDemandRefresh = -Infinity
  private inFlight: Promise<void> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private readonly retryMs: number
  private readonly minRefreshIntervalMs: number
  private readonly refreshPeriodMs: number

  constructor(private readonly config: IssuerKeysConfig) {
    this.retryMs = config.timings?.retryMs ?? 10_000
    this.minRefreshIntervalMs = config.timings?.minRefreshIntervalMs ?? 10_000
    this.refreshPeriodMs = config.timings?.refreshPeriodMs ?? 3_600_000
  }

  /** Starts discovery in the background; resolves after the first attempt, whatever its outcome. */
  start(): Promise<void> {
    return this.attemptDiscovery()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  /** Whether discovery and the first key set fetch have succeeded. */
  get initialized(): boolean {
    return this.keys !== undefined
  }

  /**
   * The keys that may have signed a token with this key id (every key when
   * the token names none). An unknown id fetches the key set again, rate limited.
   */
  async candidates(kid: string | undefined, alg: string): Promise<VerifyKey[]> {
    let matching = this.matching(kid)
    if (matching.length === 0 && kid !== undefined && Date.now() - this.lastOnDemandRefresh >= this.minRefreshIntervalMs) {
      this.lastOnDemandRefresh = Date.now()
      await this.refresh().catch((err: unknown) => this.config.logger.warn({ issuer: this.config.issuerUrl, err: String(err) }, 'oidc: refreshing the key set failed'))
      matching = this.matching(kid)
    }
    const out: VerifyKey[] = []
    for (const jwk of matching) {
      const key = await this.importKey(jwk, alg).catch(() => undefined)
      if (key) out.push(key)
    }
    return out
  }

  private matching(kid: string | undefined): JWK[] {
    const keys = (this.keys ?? []).filter((k) => k.use === undefined || k.use === 'sig')
    return kid === undefined ? keys : keys.filter((k) => k.kid === kid)
  }

  /** One import per key and algorithm: a wrong pairing (an EC key for RS256) is simply not a candidate. */
  private importKey(jwk: JWK, alg: string): Promise<VerifyKey> {
    const id = `${alg}\u0000${JSON.stringify(jwk)}`
    let key = this.imported.get(id)
    if (!key) {
      if (jwk.alg !== undefined && jwk.alg !== alg) return Promise.reject(new Error('the key is for another algorithm'))
      key = importJWK({ ...jwk, ext: true }, alg)
      this.imported.set(id, key)
    }
    return key
  }

  private async attemptDiscovery(): Promise<void> {
    try {
      await this.discover()
      this.schedule(this.refreshPeriodMs, () => this.periodicRefresh())
    } catch (err) {
      this.config.logger.error({ issuer: this.config.issuerUrl, err: String(err) }, 'oidc authenticator: initializing plugin failed; retrying')
      this.schedule(this.retryMs, () => this.attemptDiscovery())
    }
  }

  private periodicRefresh(): Promise<void> {
    return this.refresh()
      .catch((err: unknown) => this.config.logger.warn({ issuer: this.config.issuerUrl, err: String(err) }, 'oidc: refreshing the key set failed'))
      .finally(() => this.schedule(this.refreshPeriodMs, () => this.periodicRefresh()))
  }

  private schedule(ms: number, run: () => Promise<void>): void {
    if (this.stopped) return
    this.timer = setTimeout(() => void run(), ms)
  }

  private async discover(): Promise<void> {
    const { issuerUrl, discoveryUrl } = this.config
    const url = discoveryUrl || `${issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`
    const document = await this.getJson(url)
    if (!isObject(document)) throw new Error(`oidc: failed to decode provider discovery object from ${url}`)
    // The document must name the configured issuer, as go-oidc's provider check demands.
    if (document['issuer'] !== issuerUrl) {
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuerUrl)} got ${JSON.stringify(document['issuer'])}`)
    }
    const jwksUri = document['jwks_uri']
    if (typeof jwksUri !== 'string' || !jwksUri) throw new Error('oidc: the discovery document has no jwks_uri')
    this.jwksUri = jwksUri
    await this.refresh()
  }

  /** Fetches the key set once; concurrent callers share the fetch. Keeps the old keys when it fails. */
  private refresh(): Promise<void> {
    if (!this.jwksUri) return Promise.reject(new Error('oidc: authenticator not initialized'))
    this.inFlight ??= this.fetchKeys(this.jwksUri).finally(() => {
      this.inFlight = undefined
    })
    return this.inFlight
  }

  private async fetchKeys(uri: string): Promise<void> {
    const set = await this.getJson(uri)
    const keys = isObject(set) ? set['keys'] : undefined
    if (!Array.isArray(keys)) throw new Error(`oidc: failed to decode keys from ${uri}`)
    if (keys.length > MAX_KEYS) throw new Error(`oidc: ${uri} holds ${keys.length} keys, more than ${MAX_KEYS}`)
    // Symmetric keys never verify: HMAC would let anyone holding the "public" key sign.
    this.keys = keys.filter((k): k is JWK => isObject(k) && (k['kty'] === 'RSA' || k['kty'] === 'EC'))
    this.imported.clear()
  }

  private async getJson(url: string): Promise<unknown> {
    const text = await this.config.client.get(issuerTarget(url, this.config.certificateAuthority, this.config.egress), {
      headers: { accept: 'application/json' },
      timeoutMs: FETCH_TIMEOUT_MS,
      maxBytes: MAX_ISSUER_DOCUMENT_BYTES,
    })
    try {
      return await parseJsonInSlices(text)
    } catch {
      throw new Error(`oidc: the answer of ${url} is not JSON`)
    }
  }
}
