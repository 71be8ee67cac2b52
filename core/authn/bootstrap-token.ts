/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`), as upstream's
 * plugin/pkg/auth/authenticator/token/bootstrap: a token `<id>.<secret>`
 * is the Secret `bootstrap-token-<id>` in kube-system, of type
 * `bootstrap.kubernetes.io/token`, whose `token-secret` matches (compared
 * in constant time), not expired, and marked for authentication. The user
 * is `system:bootstrap:<id>` in `system:bootstrappers` and the groups of
 * `auth-extra-groups`. A token that fails any check is one this
 * authenticator does not know, as upstream answers.
 */
import type { StoredObjects } from '../client/stored-objects.js'
import { base64Decode } from '../machinery/base64.js'
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { TokenAuthenticator } from './bearer-token.js'
import { constantTimeEqual } from './constant-time.js'
import type { Catalogue } from '../resources/catalogue.js'

const TOKEN_FORMAT = /^([a-z0-9]{6})\.([a-z0-9]{16})$/
const SECRET_PREFIX = 'bootstrap-token-'
const SECRET_TYPE = 'bootstrap.kubernetes.io/token'
const NAMESPACE = 'kube-system'
const DEFAULT_GROUP = 'system:bootstrappers'
const USER_PREFIX = 'system:bootstrap:'
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/

/** A data value of the Secret as text ('' when absent). */
function dataOf(secret: KubeObject, key: string): string {
  const data = secret['data']
  const value = isPlainObject(data) ? data[key] : undefined
  if (typeof value !== 'string') return ''
  try {
    return new TextDecoder().decode(base64Decode(value))
  } catch {
    return ''
  }
}

/**
 * What Go's time.Parse takes for time.RFC3339: a 'T' between date and time,
 * seconds, an optional fraction, and a zone ('Z' or ±hh:mm) always.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/

/**
 * Whether every part of an RFC 3339 text is in range, as Go's parser checks
 * it ("day out of range"): JavaScript's Date.parse rolls 2099-02-30 over to
 * March 2 where Go refuses it.
 */
function inRange(m: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const zoneInRange = m[8] === undefined || (Number(m[8]) <= 23 && Number(m[9]) <= 59)
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && zoneInRange
}

/** An expiration that cannot be read as RFC 3339 counts as expired, as upstream's HasExpired. */
function expired(secret: KubeObject, now: Date): boolean {
  const text = dataOf(secret, 'expiration')
  if (!text) return false
  const m = RFC3339.exec(text)
  const at = Date.parse(text)
  return !m || !inRange(m) || Number.isNaN(at) || now.getTime() > at
}

/** system:bootstrappers and the extra groups, sorted and once each; undefined when one is not a bootstrap group. */
function groupsOf(secret: KubeObject): string[] | undefined {
  const groups = new Set([DEFAULT_GROUP])
  const extra = dataOf(secret, 'auth-extra-groups')
  if (extra) {
    for (const group of extra.split(',')) {
      if (!EXTRA_GROUP.test(group)) return undefined
      groups.add(group)
    }
  }
  return [...groups].sort()
}

export function bootstrapTokenAuthenticator(catalogue: Catalogue, stored: StoredObjects, now: () => Date, logger: Logger): TokenAuthenticator {
  const refuse = (secret: KubeObject, why: string): undefined => {
    logger.debug({ module: 'bootstrap-token', secret: `${NAMESPACE}/${secret.metadata.name ?? ''}` }, `bootstrap token ${why}`)
    return undefined
  }
  return {
    async authenticateToken(token) {
      const match = TOKEN_FORMAT.exec(token)
      if (!match) return undefined
      const [, id = '', tokenSecret = ''] = match
      const entry = catalogue.lookup('', 'v1', 'secrets')
      if (!entry) return undefined
      let secret: KubeObject
      try {
        secret = await stored.get(entry, NAMESPACE, `${SECRET_PREFIX}${id}`)
      } catch (err) {
        if (hasStatusCode(err, 404)) return undefined
        return { error: (err as Error).message }
      }
      if (secret.metadata.deletionTimestamp) return refuse(secret, 'is deleted and awaiting removal')
      if (secret['type'] !== SECRET_TYPE || !isPlainObject(secret['data'])) return refuse(secret, `has invalid type, expected ${SECRET_TYPE}.`)
      if (!constantTimeEqual(dataOf(secret, 'token-secret'), tokenSecret)) return refuse(secret, 'has invalid value for key token-secret.')
      if (dataOf(secret, 'token-id') !== id) return refuse(secret, 'has invalid value for key token-id.')
      if (expired(secret, now())) return refuse(secret, 'has expired.')
      if (dataOf(secret, 'usage-bootstrap-authentication') !== 'true') return refuse(secret, 'not marked usage-bootstrap-authentication=true.')
      const groups = groupsOf(secret)
      if (!groups) return refuse(secret, 'has invalid value for key auth-extra-groups.')
      return { user: { username: `${USER_PREFIX}${id}`, groups } }
    },
  }
}
