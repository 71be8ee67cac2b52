/**
 * The tokens a kubelet may request (NodeRestriction on
 * `serviceaccounts/<name>/token`): bound to a pod, by name and uid, that
 * is scheduled on the kubelet's own node; and, with upstream's feature gate
 * ServiceAccountNodeAudienceRestriction (off at 1.32, on from 1.33), for at
 * most one audience, which one of that pod's volumes asks for (a projected
 * service account token, or a CSI driver's token requests, reached inline,
 * through a claim and its volume, or through an ephemeral claim) or which
 * the authorizer lets the node request for that service account (verb
 * `request-serviceaccounts-token-audience`, the audience as the resource).
 * Every refusal is 403 Forbidden; a bound pod that does not exist, 404.
 */
import type { Authorizer } from '../../authz/authorizer.js'
import { notFound } from '../../machinery/status-error.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import { admissionForbidden } from './forbidden.js'
import { specOf } from './storage-classes.js'

/** Reads one object, undefined when there is none. */
export interface TokenAudienceReads {
  csiDriver(name: string): Promise<KubeObject | undefined>
  claim(namespace: string, name: string): Promise<KubeObject | undefined>
  volume(name: string): Promise<KubeObject | undefined>
}

type Obj = Record<string, unknown>
const objectAt = (o: unknown, field: string): Obj | undefined => (isPlainObject(o) && isPlainObject(o[field]) ? o[field] : undefined)
const listAt = (o: unknown, field: string): Obj[] => (isPlainObject(o) && Array.isArray(o[field]) ? o[field].filter(isPlainObject) : [])
const text = (v: unknown): string => (typeof v === 'string' ? v : '')

/** A lookup that found nothing, worded as upstream's listers word it. */
class Missing extends Error {}

/** Whether a CSI driver's `tokenRequests` name the audience; a driver that does not exist is an error. */
async function driverRequests(reads: TokenAudienceReads, driver: string, audience: string): Promise<boolean> {
  const csiDriver = await reads.csiDriver(driver)
  if (!csiDriver) throw new Missing(`csidriver.storage.k8s.io ${JSON.stringify(driver)} not found`)
  return listAt(specOf(csiDriver), 'tokenRequests').some((r) => text(r['audience']) === audience)
}

/** Whether the claim's bound volume is a CSI one whose driver requests the audience. */
async function claimRequests(reads: TokenAudienceReads, namespace: string, claimName: string, audience: string): Promise<boolean> {
  const claim = await reads.claim(namespace, claimName)
  if (!claim) throw new Missing(`persistentvolumeclaim ${JSON.stringify(claimName)} not found`)
  const volumeName = text(specOf(claim)['volumeName'])
  if (!volumeName) return false
  const volume = await reads.volume(volumeName)
  if (!volume) throw new Missing(`persistentvolume ${JSON.stringify(volumeName)} not found`)
  const driver = text(objectAt(specOf(volume), 'csi')?.['driver'])
  return driver ? driverRequests(reads, driver, audience) : false
}

/**
 * Whether a volume of the pod asks for tokens of the audience. A volume
 * whose objects cannot be read does not decide while another volume may
 * still name the audience; if none does, its error is the answer.
 */
async function podReferencesAudience(reads: TokenAudienceReads, pod: KubeObject, audience: string): Promise<boolean> {
  const namespace = pod.metadata.namespace ?? ''
  let failure: Missing | undefined
  for (const volume of listAt(specOf(pod), 'volumes')) {
    const projected = listAt(objectAt(volume, 'projected'), 'sources')
    if (projected.some((s) => isPlainObject(s['serviceAccountToken']) && text(s['serviceAccountToken']['audience']) === audience)) return true
    try {
      const csi = objectAt(volume, 'csi')
      if (csi && (await driverRequests(reads, text(csi['driver']), audience))) return true
      const claim = objectAt(volume, 'persistentVolumeClaim')
      if (claim && (await claimRequests(reads, namespace, text(claim['claimName']), audience))) return true
      // An ephemeral volume's claim is named after the pod and the volume.
      if (objectAt(volume, 'ephemeral') && (await claimRequests(reads, namespace, `${pod.metadata.name ?? ''}-${text(volume['name'])}`, audience))) return true
    } catch (err) {
      if (!(err instanceof Missing)) throw err
      failure ??= err
    }
  }
  if (failure) throw failure
  return false
}

export interface NodeTokenRules {
  /** The pod the token is to be bound to; undefined when there is none. */
  pod(namespace: string, name: string): Promise<KubeObject | undefined>
  /** The audience rules; absent, any audience may be requested (the feature gate off). */
  audiences?: { reads: TokenAudienceReads; authorizer: Authorizer }
}

/** Checks a kubelet's TokenRequest: `a` is a CREATE of `serviceaccounts/token` by node `node`. */
export async function checkNodeTokenRequest(node: string, a: AdmissionAttributes, rules: NodeTokenRules): Promise<void> {
  const forbid = (why: string) => admissionForbidden(a, why)
  const spec = specOf(a.object)
  const ref = objectAt(spec, 'boundObjectRef')
  if (!ref || ref['apiVersion'] !== 'v1' || ref['kind'] !== 'Pod' || !ref['name']) throw forbid('node requested token not bound to a pod')
  if (!ref['uid']) throw forbid('node requested token with a pod binding without a uid')
  const podName = String(ref['name'])
  const pod = await rules.pod(a.namespace, podName)
  if (!pod) throw notFound({ group: '', resource: 'pods' }, podName)
  if (ref['uid'] !== pod.metadata.uid)
    throw forbid(`the UID in the bound object reference (${String(ref['uid'])}) does not match the UID in record. The object might have been deleted and then recreated`)
  if (specOf(pod)['nodeName'] !== node) throw forbid('node requested token bound to a pod scheduled on a different node')
  if (rules.audiences) await checkAudience(node, a, pod, rules.audiences)
}

async function checkAudience(node: string, a: AdmissionAttributes, pod: KubeObject, rules: NonNullable<NodeTokenRules['audiences']>): Promise<void> {
  const forbid = (why: string) => admissionForbidden(a, why)
  const requested = specOf(a.object)['audiences']
  const audiences = Array.isArray(requested) ? requested.map(text) : []
  if (audiences.length > 1) throw forbid('node may only request 0 or 1 audiences')
  // No audience is the API server's own, which a projected token without an audience asks for.
  const audience = audiences[0] ?? ''
  try {
    if (await podReferencesAudience(rules.reads, pod, audience)) return
  } catch (err) {
    if (err instanceof Missing) throw forbid(`error validating audience ${JSON.stringify(audience)}: ${err.message}`)
    throw err
  }
  const { decision } = await rules.authorizer.authorize({
    user: a.user,
    verb: 'request-serviceaccounts-token-audience',
    isResourceRequest: true,
    path: '',
    namespace: a.namespace,
    apiGroup: '',
    apiVersion: '',
    resource: audience,
    subresource: '',
    name: a.name,
  })
  if (decision === 'allow') return
  throw forbid(`audience ${JSON.stringify(audience)} not found in pod spec volume, system:node:${node} is not authorized to request tokens for this audience`)
}
