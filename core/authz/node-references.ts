/**
 * What the Node authorizer's graph learns from each watched object, as
 * upstream's graph populator does: a pod bound to a node uses its secrets,
 * config maps, claims, service account and resource claims; a PV bound to a
 * claim hands the kubelet its mount secrets; a VolumeAttachment belongs to
 * its node. Unbound pods and PVs add nothing.
 */
import { isPlainObject, type KubeObject, MIRROR_POD_ANNOTATION } from '../machinery/object.js'
import type { Edge, Vertex, VertexType } from './node-graph.js'

type Json = Record<string, unknown>

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {})
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isPlainObject) : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

function vertex(type: VertexType, namespace: string, name: string): Vertex {
  return { type, namespace, name }
}

/** Every container of the pod, init and ephemeral ones included. */
function containers(spec: Json): Json[] {
  return [...list(spec['initContainers']), ...list(spec['containers']), ...list(spec['ephemeralContainers'])]
}

/** Secrets a pod uses: pull secrets, env and envFrom, and every volume kind that names one (upstream's VisitPodSecretNames). */
export function podSecretNames(spec: Json): Set<string> {
  const names = new Set<string>()
  const add = (name: unknown) => void (str(name) && names.add(str(name)))
  for (const ref of list(spec['imagePullSecrets'])) add(ref['name'])
  for (const c of containers(spec)) {
    for (const from of list(c['envFrom'])) add(obj(from['secretRef'])['name'])
    for (const env of list(c['env'])) add(obj(obj(env['valueFrom'])['secretKeyRef'])['name'])
  }
  for (const v of list(spec['volumes'])) {
    add(obj(v['secret'])['secretName'])
    add(obj(v['azureFile'])['secretName'])
    for (const kind of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) add(obj(obj(v[kind])['secretRef'])['name'])
    add(obj(obj(v['csi'])['nodePublishSecretRef'])['name'])
    for (const source of list(obj(v['projected'])['sources'])) add(obj(source['secret'])['name'])
  }
  return names
}

/** Config maps a pod uses: env, envFrom, configMap and projected volumes (upstream's VisitPodConfigmapNames). */
export function podConfigMapNames(spec: Json): Set<string> {
  const names = new Set<string>()
  const add = (name: unknown) => void (str(name) && names.add(str(name)))
  for (const c of containers(spec)) {
    for (const from of list(c['envFrom'])) add(obj(from['configMapRef'])['name'])
    for (const env of list(c['env'])) add(obj(obj(env['valueFrom'])['configMapKeyRef'])['name'])
  }
  for (const v of list(spec['volumes'])) {
    add(obj(v['configMap'])['name'])
    for (const source of list(obj(v['projected'])['sources'])) add(obj(source['configMap'])['name'])
  }
  return names
}

/** Claims a pod mounts; an ephemeral volume's claim is named `<pod>-<volume>`. */
export function podClaimNames(podName: string, spec: Json): Set<string> {
  const names = new Set<string>()
  for (const v of list(spec['volumes'])) {
    const claim = str(obj(v['persistentVolumeClaim'])['claimName'])
    if (claim) names.add(claim)
    if (isPlainObject(v['ephemeral'])) names.add(`${podName}-${str(v['name'])}`)
  }
  return names
}

/** The edges a pod declares; none while it is not bound to a node. */
export function podEdges(pod: KubeObject): Edge[] {
  const spec = obj(pod['spec'])
  const nodeName = str(spec['nodeName'])
  const namespace = pod.metadata.namespace ?? ''
  const name = pod.metadata.name ?? ''
  if (!nodeName) return []
  const self = vertex('pod', namespace, name)
  const edges: Edge[] = [{ from: self, to: vertex('node', '', nodeName) }]
  // A node creates its mirror pods itself: one must never grant it anything more (as upstream's graph, defence
  // in depth behind NodeRestriction; an ephemeral volume's claim name or a ResourceClaim got past it).
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return edges
  const from = (type: VertexType, names: Iterable<string>) => {
    for (const n of names) edges.push({ from: vertex(type, namespace, n), to: self })
  }
  from('secret', podSecretNames(spec))
  from('configmap', podConfigMapNames(spec))
  from('pvc', podClaimNames(name, spec))
  const account = str(spec['serviceAccountName'])
  if (account) from('serviceaccount', [account])
  const claims = [
    ...list(spec['resourceClaims']).map((c) => str(c['resourceClaimName'])),
    ...list(obj(pod['status'])['resourceClaimStatuses']).map((c) => str(c['resourceClaimName'])),
  ].filter(Boolean)
  from('resourceclaim', new Set(claims))
  return edges
}

/**
 * The edges a PV declares: PV -> its claim, and each secret the kubelet
 * needs to mount it -> PV. Secrets only the controllers use (CSI controller
 * publish and expand) are not the kubelet's to read.
 */
export function persistentVolumeEdges(pv: KubeObject): Edge[] {
  const spec = obj(pv['spec'])
  const claimRef = obj(spec['claimRef'])
  const claimName = str(claimRef['name'])
  if (!claimName) return []
  const claimNamespace = str(claimRef['namespace'])
  const self = vertex('pv', '', pv.metadata.name ?? '')
  const edges: Edge[] = [{ from: self, to: vertex('pvc', claimNamespace, claimName) }]
  const secret = (ref: Json, fallbackNamespace = claimNamespace) => {
    const name = str(ref['name'])
    if (name) edges.push({ from: vertex('secret', str(ref['namespace']) || fallbackNamespace, name), to: self })
  }
  const azureFile = obj(spec['azureFile'])
  if (str(azureFile['secretName'])) secret({ name: azureFile['secretName'], namespace: azureFile['secretNamespace'] })
  for (const kind of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) secret(obj(obj(spec[kind])['secretRef']))
  const csi = obj(spec['csi'])
  for (const ref of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) secret(obj(csi[ref]))
  return edges
}

/** A VolumeAttachment belongs to the node it attaches to. */
export function volumeAttachmentEdges(va: KubeObject): Edge[] {
  const nodeName = str(obj(va['spec'])['nodeName'])
  return nodeName ? [{ from: vertex('volumeattachment', '', va.metadata.name ?? ''), to: vertex('node', '', nodeName) }] : []
}
