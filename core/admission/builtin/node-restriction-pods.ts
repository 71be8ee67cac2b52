/**
 * The pods a kubelet may create (NodeRestriction): mirror pods of its
 * static pods only, bound to itself, owned by its own Node (as controller,
 * without blockOwnerDeletion, with the Node's current uid), and using no
 * other API object (service account, secrets, config maps, trust bundles,
 * claims, resource claims), which the Node authorizer would otherwise let it
 * read (its graph adds no such edge for a mirror pod either).
 */
import { podConfigMapNames, podSecretNames } from '../../authz/node-references.js'
import { notFound } from '../../machinery/status-error.js'
import { isPlainObject, MIRROR_POD_ANNOTATION } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import { admissionForbidden } from './forbidden.js'
import type { NodeRestrictionReads } from './node-restriction.js'
import { specOf } from './storage-classes.js'

const volumesOf = (spec: Record<string, unknown>): Record<string, unknown>[] =>
  Array.isArray(spec['volumes']) ? spec['volumes'].filter(isPlainObject) : []

export async function checkMirrorPodCreate(node: string, a: AdmissionAttributes, reads: NodeRestrictionReads): Promise<void> {
  const pod = a.object
  const quoted = JSON.stringify(node)
  const forbid = (why: string) => admissionForbidden(a, why)
  if (!pod) throw forbid('unexpected type <nil>')
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined)
    throw forbid(`pod does not have ${JSON.stringify(MIRROR_POD_ANNOTATION)} annotation, node ${quoted} can only create mirror pods`)
  const spec = specOf(pod)
  if (spec['nodeName'] !== node) throw forbid(`node ${quoted} can only create pods with spec.nodeName set to itself`)
  const owners = pod.metadata.ownerReferences ?? []
  if (owners.length > 1) throw forbid(`node ${quoted} can only create pods with a single owner reference set to itself`)
  const owner = owners[0]
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node)
    throw forbid(`node ${quoted} can only create pods with an owner reference set to itself`)
  if (owner.controller !== true) throw forbid(`node ${quoted} can only create pods with a controller owner reference set to itself`)
  if (owner.blockOwnerDeletion === true) throw forbid(`node ${quoted} must not set blockOwnerDeletion on an owner reference`)
  const nodeObject = await reads.node(node)
  if (!nodeObject) throw notFound({ group: '', resource: 'nodes' }, node)
  if (owner.uid !== nodeObject.metadata.uid) throw forbid(`node ${node} UID mismatch: expected ${owner.uid} got ${nodeObject.metadata.uid ?? ''}`)

  if (spec['serviceAccountName']) throw forbid(`node ${quoted} can not create pods that reference a service account`)
  if (podSecretNames(spec).size) throw forbid(`node ${quoted} can not create pods that reference secrets`)
  if (podConfigMapNames(spec).size) throw forbid(`node ${quoted} can not create pods that reference configmaps`)
  const volumes = volumesOf(spec)
  const projectedSources = volumes.flatMap((v) => {
    const sources = isPlainObject(v['projected']) ? v['projected']['sources'] : undefined
    return Array.isArray(sources) ? sources.filter(isPlainObject) : []
  })
  if (projectedSources.some((source) => source['clusterTrustBundle'] !== undefined))
    throw forbid(`node ${quoted} can not create pods that reference clustertrustbundles`)
  if (volumes.some((v) => v['persistentVolumeClaim'] !== undefined)) throw forbid(`node ${quoted} can not create pods that reference persistentvolumeclaims`)
  // CVE-2025-4563: a mirror pod naming a ResourceClaim let its node read the claim.
  if (Array.isArray(spec['resourceClaims']) && spec['resourceClaims'].length > 0) throw forbid(`node ${quoted} can not create pods that reference resourceclaims`)
}
