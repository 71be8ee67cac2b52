/**
 * What a service-account token stands for once its signature is good
 * (upstream's validators in pkg/serviceaccount): a bound token must be
 * within its lifetime and its service account, and the pod, secret or node
 * it is bound to, must still exist with the uids it names; a legacy
 * (secret-based) token must, with `--service-account-lookup`, still be the
 * token held by its Secret, of a service account that still exists. The use
 * of a legacy token is then tracked as upstream tracks it (legacy.go): an
 * audit annotation naming its Secret, a warning when the service account
 * lists that Secret (an auto-generated token), a count by kind, and the
 * Secret labelled with the day it was last used.
 */
import type { StoredObjects } from '../../client/stored-objects.js'
import { base64Decode } from '../../machinery/base64.js'
import { hasStatusCode } from '../../machinery/status-error.js'
import type { KubeObject, UserInfo } from '../../machinery/object.js'
import type { AuthNotes } from '../authenticator.js'
import { constantTimeEqual } from '../constant-time.js'
import { serviceAccountGroups, serviceAccountUsername, splitServiceAccountUsername, type TokenClaims } from './claims.js'
import type { TokenValidator } from './jwt.js'
import type { Catalogue } from '../../resources/catalogue.js'

/** go-jose's allowance for clocks that disagree, on every time check. */
const LEEWAY_MS = 60_000

export const LEGACY_ISSUER = 'kubernetes/serviceaccount'
export const INVALID_SINCE_LABEL = 'kubernetes.io/legacy-token-invalid-since'
export const LAST_USED_LABEL = 'kubernetes.io/legacy-token-last-used'
/** Upstream's warning to the user of an auto-generated legacy token. */
export const AUTO_GENERATED_TOKEN_WARNING =
  'Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.'

const EXTRA = 'authentication.kubernetes.io/'

/** The objects tokens are checked against; undefined when absent. */
export interface TokenObjects {
  serviceAccount(namespace: string, name: string): Promise<KubeObject | undefined>
  pod(namespace: string, name: string): Promise<KubeObject | undefined>
  secret(namespace: string, name: string): Promise<KubeObject | undefined>
  node(name: string): Promise<KubeObject | undefined>
}

/** Reads the objects as stored, a missing object (or namespace, or a resource not served) being undefined. */
export function storedTokenObjects(catalogue: Catalogue, stored: StoredObjects): TokenObjects {
  const get = async (resource: string, namespace: string, name: string): Promise<KubeObject | undefined> => {
    const entry = catalogue.lookup('', 'v1', resource)
    if (!entry) return undefined
    try {
      return await stored.get(entry, namespace, name)
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined
      throw err
    }
  }
  return {
    serviceAccount: (ns, name) => get('serviceaccounts', ns, name),
    pod: (ns, name) => get('pods', ns, name),
    secret: (ns, name) => get('secrets', ns, name),
    node: (name) => get('nodes', '', name),
  }
}

interface ServiceAccountInfo {
  namespace: string
  name: string
  uid: string
  podName?: string
  podUID?: string
  nodeName?: string
  nodeUID?: string
  credentialID?: string
}

/** The user a service account is, with its binding in `extra` (upstream's ServiceAccountInfo.UserInfo). */
function userOf(sa: ServiceAccountInfo): UserInfo {
  const extra: Record<string, string[]> = {}
  if (sa.credentialID) extra[`${EXTRA}credential-id`] = [sa.credentialID]
  if (sa.nodeName) {
    extra[`${EXTRA}node-name`] = [sa.nodeName]
    if (sa.nodeUID) extra[`${EXTRA}node-uid`] = [sa.nodeUID]
  }
  if (sa.podName && sa.podUID) {
    extra[`${EXTRA}pod-name`] = [sa.podName]
    extra[`${EXTRA}pod-uid`] = [sa.podUID]
  }
  const user: UserInfo = { username: serviceAccountUsername(sa.namespace, sa.name), groups: serviceAccountGroups(sa.namespace) }
  if (sa.uid) user.uid = sa.uid
  if (Object.keys(extra).length) user.extra = extra
  return user
}

const uidOf = (o: KubeObject): string => o.metadata.uid ?? ''

/** Deleted (a deletionTimestamp) more than the leeway ago. */
function deletedBefore(o: KubeObject, limitMs: number): boolean {
  const at = o.metadata.deletionTimestamp
  return typeof at === 'string' && Date.parse(at) < limitMs
}

/** The lifetime checks of go-jose's Claims.Validate, with its minute of leeway. */
function lifetimeError(claims: TokenClaims, nowMs: number): string | undefined {
  if (claims.nbf !== undefined && nowMs + LEEWAY_MS < claims.nbf * 1000) return 'service account token is not valid yet'
  if (claims.exp !== undefined && nowMs - LEEWAY_MS > claims.exp * 1000) return 'service account token has expired'
  if (claims.iat !== undefined && nowMs + LEEWAY_MS < claims.iat * 1000) return 'service account token is issued in the future'
  return undefined
}

const INVALIDATED = { error: 'service account token has been invalidated' }

/** Bound tokens (TokenRequest): always checked against the stored objects, as upstream. */
export function boundTokenValidator(objects: TokenObjects, now: () => Date): TokenValidator {
  return async (_token, claims) => {
    const nowMs = now().getTime()
    const lifetime = lifetimeError(claims, nowMs)
    if (lifetime) return { error: lifetime }
    const limit = nowMs - LEEWAY_MS
    const k8s = claims['kubernetes.io'] ?? {}
    const namespace = k8s.namespace ?? ''
    const saRef = k8s.serviceaccount ?? {}
    const saName = saRef.name ?? ''
    const sa = namespace && saName ? await objects.serviceAccount(namespace, saName) : undefined
    if (!sa) return { error: `serviceaccounts ${JSON.stringify(saName)} not found` }
    if (uidOf(sa) !== (saRef.uid ?? '')) return { error: `service account UID (${uidOf(sa)}) does not match claim (${saRef.uid ?? ''})` }
    if (deletedBefore(sa, limit)) return { error: `service account ${namespace}/${saName} has been deleted` }

    if (k8s.secret) {
      const secret = await objects.secret(namespace, k8s.secret.name ?? '')
      if (!secret) return INVALIDATED
      if (uidOf(secret) !== (k8s.secret.uid ?? ''))
        return { error: `secret UID (${uidOf(secret)}) does not match service account secret ref claim (${k8s.secret.uid ?? ''})` }
      if (deletedBefore(secret, limit)) return INVALIDATED
    }
    const info: ServiceAccountInfo = { namespace, name: saName, uid: saRef.uid ?? '' }
    if (k8s.pod) {
      const pod = await objects.pod(namespace, k8s.pod.name ?? '')
      if (!pod) return INVALIDATED
      if (uidOf(pod) !== (k8s.pod.uid ?? '')) return { error: `pod UID (${uidOf(pod)}) does not match service account pod ref claim (${k8s.pod.uid ?? ''})` }
      if (deletedBefore(pod, limit)) return INVALIDATED
      info.podName = k8s.pod.name ?? ''
      info.podUID = k8s.pod.uid ?? ''
    }
    if (k8s.node) {
      if (k8s.pod) {
        // A pod-bound token names its node for information; the pod's binding is what is checked.
        info.nodeName = k8s.node.name ?? ''
        info.nodeUID = k8s.node.uid ?? ''
      } else {
        const node = await objects.node(k8s.node.name ?? '')
        if (!node) return INVALIDATED
        if (uidOf(node) !== (k8s.node.uid ?? ''))
          return { error: `node UID (${uidOf(node)}) does not match service account node ref claim (${k8s.node.uid ?? ''})` }
        if (deletedBefore(node, limit)) return INVALIDATED
        info.nodeName = k8s.node.name ?? ''
        info.nodeUID = k8s.node.uid ?? ''
      }
    }
    if (claims.jti) info.credentialID = `JTI=${claims.jti}`
    return userOf(info)
  }
}

/** The claims of a legacy token, under their own long names. */
function legacyClaim(payload: Record<string, unknown>, name: string): string {
  const v = payload[`kubernetes.io/serviceaccount/${name}`]
  return typeof v === 'string' ? v : ''
}

/** base64 `data.token` of a Secret, as text. */
function secretToken(secret: KubeObject): string {
  const data = secret['data']
  const encoded = data && typeof data === 'object' ? (data as Record<string, unknown>)['token'] : undefined
  if (typeof encoded !== 'string') return ''
  try {
    return new TextDecoder().decode(base64Decode(encoded))
  } catch {
    return ''
  }
}

/** What the use of a legacy token is reported to. */
export interface LegacyTokenUse {
  now(): Date
  count(kind: 'auto' | 'manual' | 'invalidated'): void
  /** Labels the Secret with `LAST_USED_LABEL: day`; a failure is logged, never the request's. */
  labelLastUsed(secret: KubeObject, day: string): Promise<void>
}

const DAY_MS = 24 * 60 * 60 * 1000
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/**
 * Labels the Secret with today's date unless it has it, or tomorrow's (a
 * server whose clock is ahead wrote it): at most one write a day per Secret.
 */
async function markUsed(use: LegacyTokenUse, secret: KubeObject): Promise<void> {
  const nowMs = use.now().getTime()
  const today = utcDay(nowMs)
  const lastUsed = secret.metadata.labels?.[LAST_USED_LABEL]
  if (lastUsed !== today && lastUsed !== utcDay(nowMs + DAY_MS)) await use.labelLastUsed(secret, today)
}

/** Whether the service account lists the Secret: the token controller made it (upstream's test for auto-generated). */
function listsSecret(sa: KubeObject, secretName: string): boolean {
  const refs = sa['secrets']
  return Array.isArray(refs) && refs.some((ref) => (ref as { name?: unknown } | null)?.name === secretName)
}

/**
 * Legacy tokens (`kubernetes.io/service-account-token` Secrets, issuer
 * `kubernetes/serviceaccount`); `use`: where their use is tracked, when it is.
 */
export function legacyTokenValidator(objects: TokenObjects, lookup: boolean, use?: LegacyTokenUse): TokenValidator {
  return async (token, claims, payload, notes?: AuthNotes) => {
    if (!claims.sub) return { error: 'sub claim is missing' }
    const namespace = legacyClaim(payload, 'namespace')
    if (!namespace) return { error: 'namespace claim is missing' }
    const secretName = legacyClaim(payload, 'secret.name')
    if (!secretName) return { error: 'secretName claim is missing' }
    const saName = legacyClaim(payload, 'service-account.name')
    if (!saName) return { error: 'serviceAccountName claim is missing' }
    const saUID = legacyClaim(payload, 'service-account.uid')
    if (!saUID) return { error: 'serviceAccountUID claim is missing' }
    const subject = splitServiceAccountUsername(claims.sub)
    if (!subject || subject.namespace !== namespace || subject.name !== saName) return { error: 'sub claim is invalid' }
    if (lookup) {
      const secret = await objects.secret(namespace, secretName)
      if (!secret || secret.metadata.deletionTimestamp) return { error: 'Token has been invalidated' }
      if (!constantTimeEqual(secretToken(secret), token)) return { error: "Token does not match server's copy" }
      const sa = await objects.serviceAccount(namespace, saName)
      if (!sa) return { error: `serviceaccounts ${JSON.stringify(saName)} not found` }
      if (sa.metadata.deletionTimestamp) return { error: `ServiceAccount ${namespace}/${saName} has been deleted` }
      if (uidOf(sa) !== saUID) return { error: `ServiceAccount UID (${uidOf(sa)}) does not match claim (${saUID})` }
      if (secret.metadata.labels?.[INVALID_SINCE_LABEL]) {
        // A refused use is tracked too: the cleaner must not delete a Secret whose token is still presented.
        if (notes) notes.annotations['authentication.k8s.io/legacy-token-invalidated'] = `${secretName}/${namespace}`
        if (use) {
          use.count('invalidated')
          await markUsed(use, secret)
        }
        return {
          error: `the token in secret ${namespace}/${secretName} for service account ${namespace}/${saName} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this token`,
        }
      }
      const autoGenerated = listsSecret(sa, secretName)
      if (autoGenerated) {
        notes?.warnings.push(AUTO_GENERATED_TOKEN_WARNING)
        if (notes) notes.annotations['authentication.k8s.io/legacy-token-autogenerated-secret'] = secretName
      } else if (notes) {
        notes.annotations['authentication.k8s.io/legacy-token-manual-secret'] = secretName
      }
      if (use) {
        use.count(autoGenerated ? 'auto' : 'manual')
        await markUsed(use, secret)
      }
    }
    return userOf({ namespace, name: saName, uid: saUID })
  }
}
