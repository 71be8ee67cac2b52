/**
 * The SubjectAccessReview the Webhook authorizer sends, and the reading of
 * its answer, as upstream's webhook authorizer writes and reads them
 * (staging/src/k8s.io/apiserver/plugin/pkg/authorizer/webhook): the v1 spec
 * is what match conditions see and what the cache is keyed by; v1beta1
 * differs on the wire only in calling the groups `group`.
 */
import type { SubjectAccessReviewSpec } from '../cel/evaluate.js'
import { parseFieldSelector } from '../machinery/field-selector.js'
import { isPlainObject } from '../machinery/object.js'
import type { Attributes } from './authorizer.js'

export type SubjectAccessReviewVersion = 'v1' | 'v1beta1'

const GROUP = 'authorization.k8s.io'

/** The spec's field selector as requirements (`=` is In, `!=` NotIn); a selector that does not parse is left out. */
function fieldSelectorOf(raw: string | undefined): SubjectAccessReviewSpec['resourceAttributes'] {
  if (!raw) return {}
  try {
    const requirements = parseFieldSelector(raw).requirements.map((r) => ({
      key: r.field,
      operator: r.operator === '=' ? 'In' : 'NotIn',
      values: [r.value],
    }))
    return requirements.length ? { fieldSelector: { requirements } } : {}
  } catch {
    return {}
  }
}

/** Drops empty strings, as Go's `omitempty` does. */
function compact<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== '' && v !== undefined)) as Partial<T>
}

/** The v1 spec for a request's attributes, fields in upstream's order. */
export function reviewSpec(attrs: Attributes): SubjectAccessReviewSpec {
  const spec: SubjectAccessReviewSpec = {}
  if (attrs.isResourceRequest) {
    spec.resourceAttributes = {
      ...compact({
        namespace: attrs.namespace,
        verb: attrs.verb,
        group: attrs.apiGroup,
        version: attrs.apiVersion,
        resource: attrs.resource,
        subresource: attrs.subresource,
        name: attrs.name,
      }),
      ...fieldSelectorOf(attrs.fieldSelector),
    }
  } else {
    spec.nonResourceAttributes = compact({ path: attrs.path, verb: attrs.verb })
  }
  const { user } = attrs
  if (user.username) spec.user = user.username
  if (user.groups.length) spec.groups = [...user.groups]
  if (user.extra && Object.keys(user.extra).length) spec.extra = user.extra
  if (user.uid) spec.uid = user.uid
  return spec
}

/** The whole review as sent in `version`. */
export function reviewBody(spec: SubjectAccessReviewSpec, version: SubjectAccessReviewVersion): Record<string, unknown> {
  // Renamed in place, so that the fields keep upstream's order.
  const wireSpec = version === 'v1beta1' ? Object.fromEntries(Object.entries(spec).map(([k, v]) => [k === 'groups' ? 'group' : k, v])) : spec
  return {
    kind: 'SubjectAccessReview',
    apiVersion: `${GROUP}/${version}`,
    metadata: { creationTimestamp: null },
    spec: wireSpec,
    status: { allowed: false },
  }
}

export interface ReviewStatus {
  allowed: boolean
  denied: boolean
  reason: string
  evaluationError: string
}

/** Reads the webhook's answer; throws, saying why, for one that is not a SubjectAccessReview of `version`. */
export function readReviewStatus(reply: unknown, version: SubjectAccessReviewVersion): ReviewStatus {
  if (!isPlainObject(reply)) throw new Error('the webhook answered something that is not a SubjectAccessReview object')
  const { apiVersion, kind } = reply
  if (kind !== undefined && kind !== 'SubjectAccessReview') throw new Error(`the webhook answered kind ${JSON.stringify(kind)}, not SubjectAccessReview`)
  if (apiVersion !== undefined && apiVersion !== `${GROUP}/${version}`) {
    throw new Error(`the webhook answered apiVersion ${JSON.stringify(apiVersion)}, not ${JSON.stringify(`${GROUP}/${version}`)}`)
  }
  const status = reply['status'] ?? {}
  if (!isPlainObject(status)) throw new Error('status: must be an object')
  const field = <T>(name: string, type: 'boolean' | 'string', fallback: T): T => {
    const value = status[name]
    if (value === undefined || value === null) return fallback
    if (typeof value !== type) throw new Error(`status.${name}: must be a ${type}, not ${JSON.stringify(value)}`)
    return value as T
  }
  return {
    allowed: field('allowed', 'boolean', false),
    denied: field('denied', 'boolean', false),
    reason: field('reason', 'string', ''),
    evaluationError: field('evaluationError', 'string', ''),
  }
}
