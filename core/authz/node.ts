/**
 * The Node authorizer (`--authorization-mode=Node`; upstream:
 * plugin/pkg/auth/authorizer/node): a kubelet, user `system:node:<name>` in
 * group `system:nodes`, may read the objects its pods use (secrets, config
 * maps, claims and their volumes, service account tokens), read and write
 * its own Node and Lease, and do what every node does (NODE_RULES).
 * Everything else, and every other user, gets no opinion, so that RBAC may
 * still answer. The relations come from the graph (node-graph.ts) that the
 * watches of pods, PVs and VolumeAttachments keep current.
 */
import { parseFieldSelector } from '../machinery/field-selector.js'
import type { UserInfo } from '../machinery/object.js'
import type { Part, SecurityContext } from '../security/context.js'
import type { Attributes, Authorizer, AuthorizerDecision } from './authorizer.js'
import { NodeGraph, type Vertex, type VertexType } from './node-graph.js'
import { persistentVolumeEdges, podEdges, volumeAttachmentEdges } from './node-references.js'
import { nodeRulesAllow } from './node-rules.js'
import { followInformer } from '../client/informer.js'

const NODE_USER_PREFIX = 'system:node:'
export const NODES_GROUP = 'system:nodes'
const NODE_LEASE_NAMESPACE = 'kube-node-lease'

/** The node a user is the kubelet of: both the name prefix and the group, as upstream's NodeIdentity. */
export function nodeIdentity(user: UserInfo): { nodeName: string } | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined
  return { nodeName: user.username.slice(NODE_USER_PREFIX.length) }
}

const allow: AuthorizerDecision = { decision: 'allow', reason: '' }
const noOpinion = (reason = ''): AuthorizerDecision => ({ decision: 'no-opinion', reason })

/** Which subdivided resource a request is for (group/resource). */
type Check = (nodeName: string, attrs: Attributes) => AuthorizerDecision

export function nodeAuthorizer(graph: NodeGraph): Authorizer {
  const related = (nodeName: string, type: VertexType, attrs: Attributes): AuthorizerDecision => {
    if (!attrs.name) return noOpinion('No Object name found')
    const start: Vertex = { type, namespace: attrs.namespace, name: attrs.name }
    return graph.reaches(start, nodeName) ? allow : noOpinion(`no relationship found between node '${nodeName}' and this object`)
  }
  const getOnly = (type: VertexType): Check => (nodeName, attrs) => {
    if (attrs.verb !== 'get') return noOpinion('can only get individual resources of this type')
    if (attrs.subresource) return noOpinion('cannot get subresource')
    return related(nodeName, type, attrs)
  }
  const readNamespaced = (type: VertexType): Check => (nodeName, attrs) => {
    if (!['get', 'list', 'watch'].includes(attrs.verb)) return noOpinion('can only read resources of this type')
    if (attrs.subresource) return noOpinion('cannot read subresource')
    if (!attrs.namespace) return noOpinion('can only read namespaced object of this type')
    return related(nodeName, type, attrs)
  }
  const ownNamed = (what: string, extra: (attrs: Attributes) => string | undefined = () => undefined): Check => (nodeName, attrs) => {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)) return noOpinion(`can only get, create, update, patch, or delete a ${what}`)
    const problem = extra(attrs)
    if (problem) return noOpinion(problem)
    // The name of an object being created is not known here; NodeRestriction admission checks it.
    if (attrs.verb !== 'create' && attrs.name !== nodeName) return noOpinion(`can only access ${what} with the same name as the requesting node`)
    return allow
  }

  const checks: Record<string, Check> = {
    '/secrets': readNamespaced('secret'),
    '/configmaps': readNamespaced('configmap'),
    '/persistentvolumeclaims': (nodeName, attrs) => {
      if (attrs.subresource !== 'status') return getOnly('pvc')(nodeName, attrs)
      if (attrs.verb !== 'update' && attrs.verb !== 'patch') return noOpinion('can only get/update/patch this type')
      return related(nodeName, 'pvc', attrs)
    },
    '/persistentvolumes': getOnly('pv'),
    'resource.k8s.io/resourceclaims': getOnly('resourceclaim'),
    'storage.k8s.io/volumeattachments': getOnly('volumeattachment'),
    '/serviceaccounts': (nodeName, attrs) => {
      if (attrs.verb !== 'create' || !attrs.name) return noOpinion('can only create tokens for individual service accounts')
      if (attrs.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount')
      return related(nodeName, 'serviceaccount', attrs)
    },
    'coordination.k8s.io/leases': ownNamed('node lease', (attrs) =>
      attrs.namespace !== NODE_LEASE_NAMESPACE ? `can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace` : undefined,
    ),
    'storage.k8s.io/csinodes': ownNamed('CSINode', (attrs) => (attrs.subresource ? 'cannot authorize CSINode subresources' : undefined)),
    '/nodes': nodeObject,
    '/pods': (nodeName, attrs) => podObject(nodeName, attrs, related),
  }

  return {
    async authorize(attrs) {
      const identity = nodeIdentity(attrs.user)
      if (!identity) return noOpinion()
      const { nodeName } = identity
      if (!nodeName) return noOpinion(`unknown node for user ${JSON.stringify(attrs.user.username)}`)
      const check = attrs.isResourceRequest ? checks[`${attrs.apiGroup}/${attrs.resource}`] : undefined
      if (check) return check(nodeName, attrs)
      return nodeRulesAllow(attrs) ? allow : noOpinion()
    },
  }
}

/** Its own Node only, read by name; any Node may be registered or updated (NodeRestriction narrows that). */
function nodeObject(nodeName: string, attrs: Attributes): AuthorizerDecision {
  if (attrs.subresource === '') {
    if (['create', 'update', 'patch'].includes(attrs.verb)) return allow
    if (['get', 'list', 'watch'].includes(attrs.verb)) {
      if (attrs.name === nodeName) return allow
      if (attrs.name === '') return noOpinion(`node '${nodeName}' cannot read all nodes, only its own Node object`)
      return noOpinion(`node '${nodeName}' cannot read '${attrs.name}', only its own Node object`)
    }
  }
  if (attrs.subresource === 'status' && (attrs.verb === 'update' || attrs.verb === 'patch')) return allow
  return noOpinion()
}

/** Whether a list's field selector keeps it to the pods bound to this node. */
function scopedToNode(nodeName: string, fieldSelector: string | undefined): boolean {
  if (!fieldSelector) return false
  try {
    return parseFieldSelector(fieldSelector).requirements.some((r) => r.field === 'spec.nodeName' && r.operator === '=' && r.value === nodeName)
  } catch {
    return false
  }
}

type Related = (nodeName: string, type: VertexType, attrs: Attributes) => AuthorizerDecision

/** Pods: read the ones bound to this node, list them with `spec.nodeName=<node>`, write mirror pods, status and evictions. */
function podObject(nodeName: string, attrs: Attributes, related: Related): AuthorizerDecision {
  switch (attrs.subresource) {
    case '':
      if (attrs.verb === 'get') return related(nodeName, 'pod', attrs)
      if (attrs.verb === 'list' || attrs.verb === 'watch') {
        if (scopedToNode(nodeName, attrs.fieldSelector)) return allow
        if (attrs.name) return related(nodeName, 'pod', attrs)
        return noOpinion('can only list/watch pods with spec.nodeName field selector')
      }
      if (attrs.verb === 'create' || attrs.verb === 'delete') return allow
      break
    case 'status':
      if (attrs.verb === 'update' || attrs.verb === 'patch') return allow
      break
    case 'eviction':
      if (attrs.verb === 'create') return allow
      break
  }
  return noOpinion()
}

/** The resources whose objects the graph is built from, with what each declares. */
const FED = [
  { group: '', version: 'v1', resource: 'pods', edges: podEdges, type: 'pod' },
  { group: '', version: 'v1', resource: 'persistentvolumes', edges: persistentVolumeEdges, type: 'pv' },
  { group: 'storage.k8s.io', version: 'v1', resource: 'volumeattachments', edges: volumeAttachmentEdges, type: 'volumeattachment' },
] as const

/** The `Node` mode: the graph, fed from watches, and the authorizer over it; ready once every resource was listed. */
export function nodeMode(ctx: SecurityContext): Part<Authorizer> {
  const graph = new NodeGraph()
  const feeds = FED.flatMap((f) => {
    const entry = ctx.catalogue.lookup(f.group, f.version, f.resource)
    // A resource not served (--runtime-config) has no objects to relate.
    if (!entry) return []
    return [
      followInformer(ctx.informers.informer(entry), (event, obj) => {
        const owner: Vertex = { type: f.type, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' }
        graph.setEdges(owner, event === 'delete' ? [] : f.edges(obj))
      }),
    ]
  })
  return {
    value: nodeAuthorizer(graph),
    ready: Promise.all(feeds.map((f) => f.ready)).then(() => {}),
    stop: () => {
      for (const f of feeds) f.stop()
    },
  }
}
