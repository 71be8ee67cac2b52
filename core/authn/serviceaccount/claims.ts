/**
 * The claims of a bound service-account token, as upstream's TokenRequest
 * writes them: the registered claims (`iss`, `sub`, `aud`, `exp`, `iat`,
 * `nbf`, `jti`) and the private `kubernetes.io` claim naming the namespace,
 * the service account and the object the token is bound to, with
 * `warnafter` for the tokens whose expiry was extended.
 */
import { isPlainObject } from '../../machinery/object.js'

/** The `default` request of projected volumes: tokens asked for this long may be extended (upstream's WarnOnlyBoundTokenExpirationSeconds). */
export const WARN_ONLY_EXPIRATION_SECONDS = 60 * 60 + 7
/** How long such a token really lives: a year (upstream's ExpirationExtensionSeconds). */
export const EXTENDED_EXPIRATION_SECONDS = 24 * 365 * 60 * 60

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:'
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts'

/** A name and uid, each left out when empty (Go's omitempty). */
export interface ObjectRef {
  name?: string
  uid?: string
}

export interface KubernetesClaim {
  namespace?: string
  serviceaccount?: ObjectRef
  pod?: ObjectRef
  secret?: ObjectRef
  node?: ObjectRef
  warnafter?: number
}

/** What a service-account token's payload holds, as the verifier reads it (nothing trusted before the signature). */
export interface TokenClaims {
  iss?: string
  sub?: string
  aud?: string[]
  exp?: number
  iat?: number
  nbf?: number
  jti?: string
  'kubernetes.io'?: KubernetesClaim
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`
}

/** The namespace and name of `system:serviceaccount:<ns>:<name>`, or undefined for any other user name. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':')
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined
  return { namespace: parts[0], name: parts[1] }
}

export function serviceAccountGroups(namespace: string): string[] {
  return [ALL_SERVICE_ACCOUNTS_GROUP, `${ALL_SERVICE_ACCOUNTS_GROUP}:${namespace}`]
}

interface Named {
  name: string
  uid: string
}

export interface BoundTokenRequest {
  issuer: string
  serviceAccount: { namespace: string; name: string; uid: string }
  pod?: Named
  secret?: Named
  /** For a pod-bound token, the pod's node; its uid is empty when the node does not exist. */
  node?: Named
  audiences: readonly string[]
  expirationSeconds: number
  /** Non-zero for an extended token: when its holder should have refreshed it. */
  warnAfterSeconds: number
  now: Date
  jti: string
}

function ref(o: Named): ObjectRef {
  return { ...(o.name ? { name: o.name } : {}), ...(o.uid ? { uid: o.uid } : {}) }
}

/** The claims of a token, as upstream's serviceaccount.Claims builds them. */
export function boundTokenClaims(r: BoundTokenRequest): TokenClaims {
  if (r.secret && (r.pod || r.node)) throw new Error('internal error, token can only be bound to one object type')
  const now = Math.floor(r.now.getTime() / 1000)
  const k8s: KubernetesClaim = { namespace: r.serviceAccount.namespace, serviceaccount: ref(r.serviceAccount) }
  if (r.pod) k8s.pod = ref(r.pod)
  if (r.secret) k8s.secret = ref(r.secret)
  if (r.node) k8s.node = ref(r.node)
  if (r.warnAfterSeconds) k8s.warnafter = now + r.warnAfterSeconds
  return {
    iss: r.issuer,
    sub: serviceAccountUsername(r.serviceAccount.namespace, r.serviceAccount.name),
    ...(r.audiences.length ? { aud: [...r.audiences] } : {}),
    exp: now + r.expirationSeconds,
    iat: now,
    nbf: now,
    jti: r.jti,
    'kubernetes.io': k8s,
  }
}

/** JSON with every object's keys sorted, as Go writes the map go-jose builds the payload from. */
export function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort)
    if (!isPlainObject(v)) return v
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sort(v[k])]),
    )
  }
  return JSON.stringify(sort(value))
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const seconds = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : undefined)

function objectRef(v: unknown): ObjectRef | undefined {
  if (!isPlainObject(v)) return undefined
  return { ...(text(v['name']) ? { name: text(v['name']) } : {}), ...(text(v['uid']) ? { uid: text(v['uid']) } : {}) }
}

/**
 * The claims of a verified payload, typed. A registered claim of the wrong
 * type is an error, as go-jose's decoding refuses it; `aud` may be a string.
 */
export function readTokenClaims(payload: Record<string, unknown>): TokenClaims {
  const claims: TokenClaims = {}
  for (const name of ['iss', 'sub', 'jti'] as const) {
    const v = payload[name]
    if (v === undefined || v === null) continue
    if (typeof v !== 'string') throw new Error(`claim ${name} is not a string`)
    claims[name] = v
  }
  for (const name of ['exp', 'iat', 'nbf'] as const) {
    const v = payload[name]
    if (v === undefined || v === null) continue
    const n = seconds(v)
    if (n === undefined) throw new Error(`claim ${name} is not a number`)
    claims[name] = n
  }
  const aud = payload['aud']
  if (typeof aud === 'string') claims.aud = [aud]
  else if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) claims.aud = aud as string[]
  else if (aud !== undefined && aud !== null) throw new Error('claim aud is not a string or a list of strings')
  const k8s = payload['kubernetes.io']
  if (isPlainObject(k8s)) {
    const out: KubernetesClaim = {}
    if (text(k8s['namespace'])) out.namespace = text(k8s['namespace'])
    for (const key of ['serviceaccount', 'pod', 'secret', 'node'] as const) {
      const r = objectRef(k8s[key])
      if (r) out[key] = r
    }
    const warn = seconds(k8s['warnafter'])
    if (warn) out.warnafter = warn
    claims['kubernetes.io'] = out
  }
  return claims
}
