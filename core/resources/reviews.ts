/**
 * Create-only virtual resources that answer questions instead of storing
 * objects: who am I (SelfSubjectReview, `kubectl auth whoami`), who does this
 * token belong to (TokenReview), and may this subject do that (the four
 * access reviews, `kubectl auth can-i`).
 */
import type { AccessDecider } from '../authz/access-review.js'
import type { SubjectRules } from '../authz/authorizer.js'
import { badRequest } from '../machinery/status-error.js'
import { type FieldError, fieldPath, invalid, invalidError } from '../machinery/field.js'
import type { ResourceEntry, StrategyContext } from './catalogue.js'
import { at, list, record, text } from './columns/values.js'
import { defineResource } from './define.js'
import { anyName } from './names.js'
import { formatTimestamp, isPlainObject, type KubeObject, type UserInfo } from '../machinery/object.js'
import { goObjectMeta } from '../machinery/go-object-meta.js'

/** What the authorizers can list of a user's permissions in a namespace (upstream's RuleResolver). */
export type RulesResolver = (user: UserInfo, namespace: string) => Promise<SubjectRules>

/**
 * What the token authenticators say of a token asked about for some
 * audiences (none: the API's own): its user and the audiences it is good
 * for, or no user, with the error when one knew the token but refused it.
 */
export type TokenAuthenticate = (
  token: string,
  audiences: readonly string[] | undefined,
  notes?: StrategyContext['notes'],
) => Promise<{ user?: UserInfo; audiences?: string[]; error?: string }>

const AUTHENTICATION = 'authentication.k8s.io'
const AUTHORIZATION = 'authorization.k8s.io'

/**
 * Upstream's rule for the access reviews: their metadata is empty (managed
 * fields aside; a LocalSubjectAccessReview may name its namespace). Checked
 * before anything else reads the review, so a review of megabytes of
 * metadata is refused rather than echoed.
 */
function metadataErrors(meta: KubeObject['metadata'], namespaceAllowed: boolean): FieldError[] {
  for (const key in meta) {
    const value = (meta as Record<string, unknown>)[key]
    if (key === 'managedFields' || (namespaceAllowed && key === 'namespace') || isZero(value)) continue
    return [invalid(fieldPath('metadata'), goObjectMeta(meta), namespaceAllowed ? 'must be empty except for namespace' : 'must be empty')]
  }
  return []
}

/** A JSON value Go decodes into a field's zero value: upstream's Semantic.DeepEqual takes an empty list or map for an unset one. */
const isZero = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  value === '' ||
  value === 0 ||
  value === false ||
  (Array.isArray(value) && value.length === 0) ||
  (isPlainObject(value) && Object.keys(value).length === 0)

/** What every review answers: its own kind, the request's metadata, and the computed status. */
function answer(group: string, kind: string, obj: KubeObject, fields: Record<string, unknown>): KubeObject {
  return {
    kind,
    apiVersion: `${group}/v1`,
    metadata: { creationTimestamp: null as unknown as string, ...obj.metadata },
    ...fields,
  }
}

function review(kind: string, resource: string, group: string, namespaced: boolean, create: ResourceEntry['virtualCreate']): ResourceEntry {
  return defineResource({ group, version: 'v1', kind, resource, namespaced, verbs: ['create'], validateName: anyName, virtualCreate: create })
}

function userInfoJson(user: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: user.username, groups: user.groups }
  if (user.uid) out['uid'] = user.uid
  if (user.extra) out['extra'] = user.extra
  return out
}

/** As upstream, a new object: nothing of the request's is echoed, its creation time is now. */
export const selfSubjectReviews: ResourceEntry = review('SelfSubjectReview', 'selfsubjectreviews', AUTHENTICATION, false, (_obj, ctx) => ({
  kind: 'SelfSubjectReview',
  apiVersion: `${AUTHENTICATION}/v1`,
  metadata: { creationTimestamp: formatTimestamp(ctx.now) },
  status: { userInfo: userInfoJson(ctx.user) },
}))

/**
 * TokenReview: the user behind `spec.token` for `spec.audiences`, or an
 * unauthenticated status (with the error of the method that refused it).
 */
export function tokenReviews(authenticate: TokenAuthenticate | undefined): ResourceEntry {
  // What the authenticators note of the token (a legacy one's Secret) goes to the review's own request, as upstream's.
  return review('TokenReview', 'tokenreviews', AUTHENTICATION, false, async (obj, ctx) => {
    const spec = record(obj['spec'])
    const token = text(spec['token'])
    if (!token) throw badRequest('token is required for TokenReview in authentication')
    const asked = list(spec['audiences']).map(text)
    const result = authenticate ? await authenticate(token, asked.length ? asked : undefined, ctx.notes) : {}
    const status: Record<string, unknown> = { user: {} }
    if (asked.length && result.user && !(result.audiences ?? []).some((a) => asked.includes(a))) {
      // As upstream: an authenticator that answered for other audiences than asked is not believed.
      status['error'] = "token audiences don't match"
    } else if (result.user) {
      status['authenticated'] = true
      status['user'] = userInfoJson(result.user)
      if (result.audiences?.length) status['audiences'] = result.audiences
    } else if (result.error) {
      status['error'] = result.error
    }
    return answer(AUTHENTICATION, 'TokenReview', obj, { spec, status })
  })
}

/** The attribute checks every access review shares (upstream's ValidateSubjectAccessReviewSpec). */
function attributeErrors(spec: Record<string, unknown>): FieldError[] {
  const path = fieldPath('spec')
  const hasResource = isPlainObject(spec['resourceAttributes'])
  const hasNonResource = isPlainObject(spec['nonResourceAttributes'])
  if (hasResource && hasNonResource)
    return [invalid(path.child('nonResourceAttributes'), spec['nonResourceAttributes'], 'cannot be specified in combination with resourceAttributes')]
  if (!hasResource && !hasNonResource)
    // Upstream reports the missing (nil) attributes as the text "null".
    return [invalid(path.child('resourceAttributes'), 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified')]
  return []
}

async function decided(decide: AccessDecider, user: UserInfo, spec: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { allowed, reason } = await decide(user, spec)
  return reason ? { allowed, reason } : { allowed }
}

/** The subject a SubjectAccessReview asks about, from its spec. */
function subjectOf(spec: Record<string, unknown>): UserInfo {
  const user: UserInfo = { username: text(spec['user']), groups: list(spec['groups']).map(text) }
  if (text(spec['uid'])) user.uid = text(spec['uid'])
  if (isPlainObject(spec['extra'])) user.extra = spec['extra'] as Record<string, string[]>
  return user
}

export function selfSubjectAccessReviews(decide: AccessDecider): ResourceEntry {
  return review('SelfSubjectAccessReview', 'selfsubjectaccessreviews', AUTHORIZATION, false, async (obj, ctx) => {
    const spec = obj['spec']
    if (!isPlainObject(spec)) throw badRequest('spec is required')
    const hasResource = isPlainObject(spec['resourceAttributes'])
    const hasNonResource = isPlainObject(spec['nonResourceAttributes'])
    if (hasResource === hasNonResource)
      throw badRequest('exactly one of nonResourceAttributes or resourceAttributes must be specified')
    const metaErrs = metadataErrors(obj.metadata, false)
    if (metaErrs.length) throw invalidError(AUTHORIZATION, 'SelfSubjectAccessReview', '', metaErrs)
    return answer(AUTHORIZATION, 'SelfSubjectAccessReview', obj, { spec, status: await decided(decide, ctx.user, spec) })
  })
}

export function subjectAccessReviews(decide: AccessDecider): ResourceEntry {
  return review('SubjectAccessReview', 'subjectaccessreviews', AUTHORIZATION, false, async (obj) => {
    const spec = record(obj['spec'])
    const errs = attributeErrors(spec)
    if (!text(spec['user']) && list(spec['groups']).length === 0)
      errs.push(invalid(fieldPath('spec').child('user'), text(spec['user']), 'at least one of user or group must be specified'))
    errs.push(...metadataErrors(obj.metadata, false))
    if (errs.length) throw invalidError(AUTHORIZATION, 'SubjectAccessReview', '', errs)
    return answer(AUTHORIZATION, 'SubjectAccessReview', obj, { spec, status: await decided(decide, subjectOf(spec), spec) })
  })
}

export function localSubjectAccessReviews(decide: AccessDecider): ResourceEntry {
  return review('LocalSubjectAccessReview', 'localsubjectaccessreviews', AUTHORIZATION, true, async (obj, ctx: StrategyContext) => {
    const spec = record(obj['spec'])
    const errs = attributeErrors(spec)
    if (isPlainObject(spec['nonResourceAttributes']))
      errs.splice(0, errs.length, invalid(fieldPath('spec').child('nonResourceAttributes'), spec['nonResourceAttributes'], 'disallowed on this kind of request'))
    if (!text(spec['user']) && list(spec['groups']).length === 0)
      errs.push(invalid(fieldPath('spec').child('user'), text(spec['user']), 'at least one of user or group must be specified'))
    // The URL's namespace when the handler passes it; else the one the body names.
    const namespace = ctx.namespace ?? obj.metadata.namespace
    // Upstream's handler puts the URL's namespace in the metadata before the review is validated.
    errs.push(...metadataErrors(namespace === undefined ? obj.metadata : { ...obj.metadata, namespace }, true))
    if (errs.length) throw invalidError(AUTHORIZATION, 'LocalSubjectAccessReview', '', errs)
    if (namespace !== undefined && text(at(spec, 'resourceAttributes', 'namespace')) !== namespace)
      throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`)
    return answer(AUTHORIZATION, 'LocalSubjectAccessReview', obj, { spec, status: await decided(decide, subjectOf(spec), spec) })
  })
}

/**
 * SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules the
 * authorizers can list for the caller in a namespace, incomplete when one
 * of them could allow more than it lists. As upstream, the answer carries
 * only the status.
 */
export function selfSubjectRulesReviews(rulesFor: RulesResolver | undefined): ResourceEntry {
  return review('SelfSubjectRulesReview', 'selfsubjectrulesreviews', AUTHORIZATION, false, async (obj, ctx) => {
    const namespace = text(record(obj['spec'])['namespace'])
    if (!namespace) throw badRequest('no namespace on request')
    const rules = rulesFor ? await rulesFor(ctx.user, namespace) : { resourceRules: [], nonResourceRules: [], incomplete: true }
    const status: Record<string, unknown> = { resourceRules: rules.resourceRules, nonResourceRules: rules.nonResourceRules, incomplete: rules.incomplete }
    if (rules.evaluationError) status['evaluationError'] = rules.evaluationError
    return answer(AUTHORIZATION, 'SelfSubjectRulesReview', { metadata: {} }, { spec: {}, status })
  })
}
