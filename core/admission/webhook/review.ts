/**
 * The AdmissionReview sent to a webhook and the checks on its answer
 * (upstream's webhook/request/admissionreview.go): the first version of the
 * webhook's `admissionReviewVersions` the server speaks (v1, v1beta1), the
 * request's fields as upstream fills them, and an answer that must be of the
 * version sent (v1: its uid and kind too) with a patch only from a mutating
 * webhook.
 */
import { base64DecodeInSteps } from '../../machinery/base64.js'
import { parseJsonInSlices } from '../../machinery/json-in-slices.js'
import { runInSlices } from '../../machinery/time-slice.js'
import type { UserInfo } from '../../machinery/object.js'
import type { AdmissionOperation } from '../attributes.js'
import type { GroupVersionKind, GroupVersionResource } from './versions.js'

export type ReviewVersion = 'v1' | 'v1beta1'

/** The AdmissionRequest, the same in both versions. */
export interface AdmissionRequest {
  uid: string
  kind: GroupVersionKind
  resource: GroupVersionResource
  subResource?: string
  requestKind: GroupVersionKind
  requestResource: GroupVersionResource
  requestSubResource?: string
  name?: string
  namespace?: string
  operation: AdmissionOperation
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }
  object: unknown
  oldObject: unknown
  dryRun: boolean
  options: unknown
}

/** The version to send, or undefined when the webhook accepts none the server knows. */
export function negotiateReviewVersion(accepted: readonly string[]): ReviewVersion | undefined {
  return accepted.find((v): v is ReviewVersion => v === 'v1' || v === 'v1beta1')
}

export function userInfoOf(user: UserInfo): AdmissionRequest['userInfo'] {
  return {
    ...(user.username ? { username: user.username } : {}),
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.groups?.length ? { groups: [...user.groups] } : {}),
    ...(user.extra && Object.keys(user.extra).length ? { extra: structuredClone(user.extra) } : {}),
  }
}

/** `CreateOptions`, `UpdateOptions`, `DeleteOptions` as upstream hands them on, with their type. */
export function operationOptions(operation: AdmissionOperation, options: Record<string, unknown> | undefined): unknown {
  const kinds: Partial<Record<AdmissionOperation, string>> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' }
  const kind = kinds[operation]
  if (!kind) return options ?? null
  const { kind: _k, apiVersion: _v, ...rest } = options ?? {}
  return { kind, apiVersion: 'meta.k8s.io/v1', ...rest }
}

/** The body POSTed to the webhook; empty strings and absent objects are left out, as Go's omitempty does. */
export function admissionReview(version: ReviewVersion, request: AdmissionRequest): Record<string, unknown> {
  const req: Record<string, unknown> = {
    uid: request.uid,
    kind: request.kind,
    resource: request.resource,
    ...(request.subResource ? { subResource: request.subResource } : {}),
    requestKind: request.requestKind,
    requestResource: request.requestResource,
    ...(request.requestSubResource ? { requestSubResource: request.requestSubResource } : {}),
    ...(request.name ? { name: request.name } : {}),
    ...(request.namespace ? { namespace: request.namespace } : {}),
    operation: request.operation,
    userInfo: request.userInfo,
    object: request.object ?? null,
    oldObject: request.oldObject ?? null,
    dryRun: request.dryRun,
    options: request.options ?? null,
  }
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request: req }
}

/** What the server takes from an answer. */
export interface AdmissionAnswer {
  allowed: boolean
  /** The decoded JSON patch document, when the answer has one. */
  patch?: unknown
  patchType?: string
  result?: Record<string, unknown>
  auditAnnotations: Record<string, string>
  warnings: string[]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The patch's base64 and JSON, decoded in time slices: a webhook may send tens of megabytes of it. */
async function decodePatch(patch: string): Promise<unknown> {
  let text: string
  try {
    const bytes = await runInSlices(base64DecodeInSteps(patch))
    if (!bytes) throw new Error('not base64')
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new Error('received undecodable patch in webhook response: illegal base64 data')
  }
  try {
    return await parseJsonInSlices(text)
  } catch (err) {
    throw new Error(`received undecodable patch in webhook response: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/**
 * Checks an answer (upstream's VerifyAdmissionResponse). Throws the reason
 * an answer is unusable, which the caller words as a failed call.
 */
export async function readAdmissionAnswer(reply: unknown, version: ReviewVersion, uid: string, mutating: boolean): Promise<AdmissionAnswer> {
  const review = isObject(reply) ? reply : {}
  const response = review['response']
  if (!isObject(response)) throw new Error('received invalid webhook response: webhook response was absent')
  const invalid = (why: string) => new Error(`received invalid webhook response: ${why}`)
  const hasPatch = typeof response['patch'] === 'string' && response['patch'] !== ''
  const hasPatchType = response['patchType'] !== undefined && response['patchType'] !== null
  let patchType: string | undefined
  if (version === 'v1') {
    if (response['uid'] !== uid) throw invalid(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response['uid'] ?? '')}`)
    const apiVersion = String(review['apiVersion'] ?? '')
    const kind = String(review['kind'] ?? '')
    if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
      const [group, ver] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion]
      throw invalid(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${group}/${ver}, Kind=${kind}`)
    }
    if (mutating) {
      if (hasPatch && !hasPatchType) throw invalid('webhook returned response.patch but not response.patchType')
      if (!hasPatch && hasPatchType) throw invalid('webhook returned response.patchType but not response.patch')
      if (hasPatchType) {
        patchType = String(response['patchType'])
        if (!patchType) throw invalid(`webhook returned invalid response.patchType of ""`)
      }
    } else {
      if (hasPatch) throw invalid('validating webhook may not return response.patch')
      if (hasPatchType) throw invalid('validating webhook may not return response.patchType')
    }
  } else if (mutating && hasPatch) {
    // v1beta1 never checked the type; a patch is taken as the one type there is.
    patchType = 'JSONPatch'
  }
  const annotations = isObject(response['auditAnnotations']) ? response['auditAnnotations'] : {}
  const answer: AdmissionAnswer = {
    allowed: response['allowed'] === true,
    auditAnnotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k, String(v)])),
    warnings: Array.isArray(response['warnings']) ? response['warnings'].map(String) : [],
  }
  if (isObject(response['status'])) answer.result = response['status']
  if (mutating && hasPatch) {
    answer.patch = await decodePatch(String(response['patch']))
    if (patchType) answer.patchType = patchType
  }
  return answer
}
