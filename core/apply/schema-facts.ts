/**
 * Facts server-side apply needs beyond the generated type tables: which
 * structs and maps upstream declares atomic (`+structType=atomic`,
 * `+mapType=atomic`, x-kubernetes-map-type in the published OpenAPI), the
 * defaults of list-map key fields (a missing key takes its default when an
 * item's identity is computed), and which fields Go writes in a type's zero
 * value (the base upstream compares a created object against).
 */

const CORE = 'io.k8s.api.core.v1'
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'

/** Struct types replaced as a whole by apply and owned as one field. */
export const ATOMIC_STRUCTS: ReadonlySet<string> = new Set([
  'io.k8s.api.admissionregistration.v1.MatchResources',
  'io.k8s.api.admissionregistration.v1.NamedRuleWithOperations',
  'io.k8s.api.admissionregistration.v1.ParamKind',
  'io.k8s.api.admissionregistration.v1.ParamRef',
  'io.k8s.api.admissionregistration.v1.Variable',
  'io.k8s.api.autoscaling.v1.CrossVersionObjectReference',
  `${CORE}.ConfigMapKeySelector`,
  `${CORE}.EndpointAddress`,
  `${CORE}.EndpointPort`,
  `${CORE}.FileKeySelector`,
  `${CORE}.LocalObjectReference`,
  `${CORE}.NodeSelector`,
  `${CORE}.NodeSelectorTerm`,
  `${CORE}.ObjectFieldSelector`,
  `${CORE}.ObjectReference`,
  `${CORE}.ResourceFieldSelector`,
  `${CORE}.ScopeSelector`,
  `${CORE}.SecretKeySelector`,
  `${CORE}.SecretReference`,
  `${CORE}.TopologySelectorTerm`,
  `${CORE}.TypedLocalObjectReference`,
  'io.k8s.api.discovery.v1.EndpointPort',
  'io.k8s.api.networking.v1.ServiceBackendPort',
  'io.k8s.api.rbac.v1.RoleRef',
  'io.k8s.api.rbac.v1.Subject',
  `${META}.LabelSelector`,
  `${META}.OwnerReference`,
])

/** Per-field overrides of a map's or struct's granularity (`<type>.<field>`). */
export const FIELD_MAP_TYPE: Readonly<Record<string, 'atomic' | 'granular'>> = {
  [`${CORE}.PodSpec.nodeSelector`]: 'atomic',
  [`${CORE}.ReplicationControllerSpec.selector`]: 'atomic',
  [`${CORE}.ServiceSpec.selector`]: 'atomic',
  'io.k8s.api.node.v1.Scheduling.nodeSelector': 'atomic',
  [`${CORE}.PersistentVolumeSpec.claimRef`]: 'granular',
}

/** Defaults of list-map key fields (`+default` on the Go field). */
export const KEY_DEFAULTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  [`${CORE}.ContainerPort`]: { protocol: 'TCP' },
  [`${CORE}.ServicePort`]: { protocol: 'TCP' },
  [`${CORE}.LocalObjectReference`]: { name: '' },
}

/**
 * Granular fields that Go's encoder writes even in a zero value: struct
 * values (never omitted) and lists without omitempty. Top-level kinds also
 * carry `metadata`, `spec` and `status` this way (see zeroValue in typed.ts).
 */
export const GO_ZERO_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [`${CORE}.PodTemplateSpec`]: ['metadata', 'spec'],
  [`${CORE}.PodSpec`]: ['containers'],
  [`${CORE}.ServiceStatus`]: ['loadBalancer'],
  [`${CORE}.PersistentVolumeClaimSpec`]: ['resources'],
  'io.k8s.api.apps.v1.DeploymentSpec': ['template', 'strategy'],
  'io.k8s.api.apps.v1.StatefulSetSpec': ['template', 'updateStrategy'],
  'io.k8s.api.apps.v1.DaemonSetSpec': ['template', 'updateStrategy'],
  'io.k8s.api.apps.v1.ReplicaSetSpec': ['template'],
  'io.k8s.api.batch.v1.JobSpec': ['template'],
  'io.k8s.api.batch.v1.CronJobSpec': ['jobTemplate'],
  'io.k8s.api.batch.v1.JobTemplateSpec': ['metadata', 'spec'],
  'io.k8s.api.networking.v1.IngressStatus': ['loadBalancer'],
}
