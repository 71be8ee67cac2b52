/**
 * NodeRestriction (upstream: plugin/pkg/admission/noderestriction): what a
 * kubelet (user `system:node:<name>` in group `system:nodes`) may write,
 * beyond what the Node authorizer lets it reach: its own Node (without its
 * taints, its config source, or labels reserved to administrators), mirror
 * pods bound to itself, the status, deletion and eviction of pods bound to
 * itself, the status of claims, tokens for pods on itself, its own Lease,
 * CSINode and ResourceSlices (the token rules are in node-restriction-tokens.ts).
 * Every refusal is 403 Forbidden.
 *
 * Creates and updates are checked in the mutating phase, where upstream
 * runs the plugin; deletes in the validating phase, where the stored object
 * is known (upstream reads it from its informers).
 */
import { jsonEqual } from '../../apply/typed.js'
import type { StoredObjects } from '../../client/stored-objects.js'
import { nodeIdentity } from '../../authz/node.js'
import { notFound } from '../../machinery/status-error.js'
import { nodes } from '../../resources/core/nodes.js'
import { pods } from '../../resources/core/pods.js'
import { persistentVolumeClaims, persistentVolumes } from '../../resources/core/volumes.js'
import { csiDrivers } from '../../resources/groups/storage.js'
import type { ResourceEntry } from '../../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { MutatingAdmission } from '../mutating.js'
import type { AdmissionPluginFactory } from '../plugins.js'
import type { ValidatingAdmission } from '../validating.js'
import { admissionForbidden } from './forbidden.js'
import { forbiddenNodeLabels, modifiedLabels } from './node-labels.js'
import { checkMirrorPodCreate } from './node-restriction-pods.js'
import { checkNodeTokenRequest, type NodeTokenRules, type TokenAudienceReads } from './node-restriction-tokens.js'
import { specOf } from './storage-classes.js'

/** Reads one object of a resource, undefined when there is none. */
export interface NodeRestrictionReads {
  pod(namespace: string, name: string): Promise<KubeObject | undefined>
  node(name: string): Promise<KubeObject | undefined>
}

const NODE_LEASE_NAMESPACE = 'kube-node-lease'
type Obj = Record<string, unknown>
const objectAt = (o: unknown, field: string): Obj | undefined => (isPlainObject(o) && isPlainObject(o[field]) ? o[field] : undefined)
const statusOf = (o: KubeObject | undefined): Obj => objectAt(o, 'status') ?? {}
const emptyAsUndefined = (v: unknown): unknown => (v === null || (Array.isArray(v) && v.length === 0) ? undefined : v)

/**
 * The plugin over `reads`; with `audiences`, a kubelet's tokens are also
 * held to the audiences its pods use (ServiceAccountNodeAudienceRestriction).
 */
export function nodeRestriction(reads: NodeRestrictionReads, audiences?: NodeTokenRules['audiences']): MutatingAdmission & ValidatingAdmission {
  const forbid = admissionForbidden
  const podOrNotFound = async (a: AdmissionAttributes, name: string): Promise<KubeObject> => {
    const pod = await reads.pod(a.namespace, name)
    if (!pod) throw notFound({ group: '', resource: 'pods' }, name)
    return pod
  }

  const pod = async (node: string, a: AdmissionAttributes): Promise<void> => {
    switch (a.subresource ?? '') {
      case '':
        if (a.operation === 'CREATE') return checkMirrorPodCreate(node, a, reads)
        if (a.operation === 'DELETE') {
          if (specOf(a.oldObject)['nodeName'] !== node) throw forbid(a, `node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`)
          return
        }
        throw forbid(a, `unexpected operation ${JSON.stringify(a.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`)
      case 'status': {
        if (a.operation !== 'UPDATE') throw forbid(a, `unexpected operation ${JSON.stringify(a.operation)}`)
        if (specOf(a.oldObject)['nodeName'] !== node)
          throw forbid(a, `node ${JSON.stringify(node)} can only update pod status for pods with spec.nodeName set to itself`)
        if (modifiedLabels(a.object?.metadata.labels, a.oldObject?.metadata.labels).length)
          throw forbid(a, `node ${JSON.stringify(node)} cannot update labels through pod status`)
        // Which claim each entry names: a kubelet reports them, it does not choose them.
        const claims = (o: KubeObject | undefined): unknown[] => {
          const statuses = statusOf(o)['resourceClaimStatuses']
          return (Array.isArray(statuses) ? statuses : []).map((s: unknown) => [objectAt({ s }, 's')?.['name'], objectAt({ s }, 's')?.['resourceClaimName'] ?? null])
        }
        if (!jsonEqual(claims(a.object), claims(a.oldObject))) throw forbid(a, `node ${JSON.stringify(node)} cannot update resource claim statues`)
        return
      }
      case 'eviction': {
        if (a.operation !== 'CREATE') throw forbid(a, `unexpected operation ${a.operation}`)
        const name = a.name || a.object?.metadata.name
        if (!name) throw forbid(a, 'could not determine pod from request data')
        const existing = await podOrNotFound(a, name)
        if (specOf(existing)['nodeName'] !== node) throw forbid(a, `node ${node} can only evict pods with spec.nodeName set to itself`)
        return
      }
      default:
        throw forbid(a, `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`)
    }
  }

  const nodeObject = (node: string, a: AdmissionAttributes): void => {
    if (a.name !== node) throw forbid(a, `node ${JSON.stringify(node)} is not allowed to modify node ${JSON.stringify(a.name)}`)
    const spec = specOf(a.object)
    if (a.operation === 'CREATE') {
      if (spec['configSource'] !== undefined && spec['configSource'] !== null)
        throw forbid(a, `node ${JSON.stringify(node)} is not allowed to create pods with a non-nil configSource`)
      const forbidden = forbiddenNodeLabels(modifiedLabels(a.object?.metadata.labels, {}))
      if (forbidden.length) throw forbid(a, `node ${JSON.stringify(node)} is not allowed to set the following labels: ${forbidden.join(', ')}`)
    }
    if (a.operation === 'UPDATE') {
      const old = specOf(a.oldObject)
      if (spec['configSource'] !== undefined && spec['configSource'] !== null && !jsonEqual(spec['configSource'], old['configSource']))
        throw forbid(a, `node ${JSON.stringify(node)} is not allowed to update configSource to a new non-nil configSource`)
      if (!jsonEqual(emptyAsUndefined(spec['taints']) ?? null, emptyAsUndefined(old['taints']) ?? null))
        throw forbid(a, `node ${JSON.stringify(node)} is not allowed to modify taints`)
      // An owner reference to an object that does not exist has the garbage collector delete the node (CVE-2025-5187).
      if (!jsonEqual(emptyAsUndefined(a.object?.metadata.ownerReferences) ?? null, emptyAsUndefined(a.oldObject?.metadata.ownerReferences) ?? null))
        throw forbid(a, `node ${JSON.stringify(node)} is not allowed to modify ownerReferences`)
      const forbidden = forbiddenNodeLabels(modifiedLabels(a.object?.metadata.labels, a.oldObject?.metadata.labels))
      if (forbidden.length) throw forbid(a, `is not allowed to modify labels: ${forbidden.join(', ')}`)
    }
  }

  const claimStatus = (node: string, a: AdmissionAttributes): void => {
    if (a.subresource !== 'status') throw forbid(a, 'may only update PVC status')
    if (a.operation !== 'UPDATE') throw forbid(a, `unexpected operation ${JSON.stringify(a.operation)}`)
    // Everything but the capacity, the conditions and (RecoverVolumeExpansionFailure, on at v1.32) the allocated resources.
    const comparable = (o: KubeObject | undefined): unknown => {
      const copy = structuredClone(o ?? { metadata: {} })
      delete copy.metadata.resourceVersion
      delete copy.metadata.managedFields
      const status = objectAt(copy, 'status')
      if (status) for (const field of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete status[field]
      return copy
    }
    const [next, previous] = [comparable(a.object) as Obj, comparable(a.oldObject) as Obj]
    if (!jsonEqual(next, previous)) {
      const changed = [...new Set([...Object.keys(next), ...Object.keys(previous)])].filter((k) => !jsonEqual(next[k], previous[k]))
      throw forbid(a, `node ${JSON.stringify(node)} is not allowed to update fields other than status.capacity and status.conditions: ${changed.join(', ')} changed`)
    }
  }

  const serviceAccountToken = async (node: string, a: AdmissionAttributes): Promise<void> => {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return
    await checkNodeTokenRequest(node, a, { pod: reads.pod, ...(audiences ? { audiences } : {}) })
  }

  const sameNameAsNode = (what: string) => (node: string, a: AdmissionAttributes): void => {
    const name = a.operation === 'CREATE' ? a.object?.metadata.name : a.name
    if (name !== node) throw forbid(a, `can only access ${what} with the same name as the requesting node`)
  }

  const resourceSlice = (node: string, a: AdmissionAttributes): void => {
    if (a.operation === 'CREATE' && specOf(a.object)['nodeName'] !== node)
      throw forbid(a, 'can only create ResourceSlice with the same NodeName as the requesting node')
    if (a.operation === 'DELETE' && specOf(a.oldObject)['nodeName'] !== node)
      throw forbid(a, 'can only delete ResourceSlice with the same NodeName as the requesting node')
  }

  const checks: Record<string, (node: string, a: AdmissionAttributes) => void | Promise<void>> = {
    '/pods': pod,
    '/nodes': nodeObject,
    '/persistentvolumeclaims': claimStatus,
    '/serviceaccounts': serviceAccountToken,
    'coordination.k8s.io/leases': (node, a) => {
      if (a.namespace !== NODE_LEASE_NAMESPACE) throw forbid(a, `can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace`)
      sameNameAsNode('node lease')(node, a)
    },
    'storage.k8s.io/csinodes': sameNameAsNode('CSINode'),
    'resource.k8s.io/resourceslices': resourceSlice,
  }

  const check = async (a: AdmissionAttributes): Promise<void> => {
    if (!a.user.username.startsWith('system:node:') || !a.user.groups.includes('system:nodes')) return
    const node = nodeIdentity(a.user)?.nodeName ?? ''
    if (!node) throw forbid(a, `could not determine node from user ${JSON.stringify(a.user.username)}`)
    await checks[`${a.entry.group}/${a.entry.resource}`]?.(node, a)
  }

  return {
    name: 'NodeRestriction',
    handles: (operation) => operation !== 'CONNECT',
    async admit(a) {
      if (a.operation !== 'DELETE') await check(a)
    },
    async validate(a) {
      if (a.operation === 'DELETE') await check(a)
    },
  }
}

/** Reads pods, nodes and what a pod's volumes name from storage: only a kubelet's pod writes and token requests need one. */
export const nodeRestrictionFactory: AdmissionPluginFactory = ({ stored, authorizer, options }) =>
  nodeRestriction(storageReads(stored), options.admission?.serviceAccountNodeAudienceRestriction ? { reads: audienceReads(stored), authorizer } : undefined)

function audienceReads(stored: StoredObjects): TokenAudienceReads {
  const read = (entry: ResourceEntry, namespace: string, name: string) => stored.find(entry, namespace, name)
  return {
    csiDriver: (name) => read(csiDrivers, '', name),
    claim: (namespace, name) => read(persistentVolumeClaims, namespace, name),
    volume: (name) => read(persistentVolumes, '', name),
  }
}

function storageReads(stored: StoredObjects): NodeRestrictionReads {
  return {
    pod: (namespace, name) => stored.find(pods, namespace, name),
    node: (name) => stored.find(nodes, '', name),
  }
}
