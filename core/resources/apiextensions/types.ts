/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition as clients send it: the
 * fields the server gives a meaning, typed for the code that reads them.
 * Stored objects are plain JSON; these types only describe them.
 */
import type { JSONSchemaProps } from '../../crd-schema/schema.js'
import type { KubeObject } from '../../machinery/object.js'

export const CRD_GROUP = 'apiextensions.k8s.io'

/** Held by every CRD marked for deletion until its custom resources are gone. */
export const CUSTOM_RESOURCE_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io'

export interface CustomResourceDefinitionNames {
  plural: string
  singular?: string
  shortNames?: string[]
  kind: string
  listKind?: string
  categories?: string[]
}

export interface CustomResourceColumnDefinition {
  name: string
  type: string
  format?: string
  description?: string
  priority?: number
  jsonPath: string
}

export interface CustomResourceSubresourceScale {
  specReplicasPath: string
  statusReplicasPath: string
  labelSelectorPath?: string
}

export interface CustomResourceSubresources {
  status?: Record<string, never>
  scale?: CustomResourceSubresourceScale
}

export interface SelectableField {
  jsonPath: string
}

export interface CustomResourceDefinitionVersion {
  name: string
  served: boolean
  storage: boolean
  deprecated?: boolean
  deprecationWarning?: string
  schema?: { openAPIV3Schema?: JSONSchemaProps }
  subresources?: CustomResourceSubresources
  additionalPrinterColumns?: CustomResourceColumnDefinition[]
  selectableFields?: SelectableField[]
}

export interface ServiceReference {
  namespace: string
  name: string
  path?: string
  port?: number
}

/** Where a webhook is reached: a URL, or a Service in the cluster; caBundle is base64 PEM. */
export interface WebhookClientConfig {
  url?: string
  service?: ServiceReference
  caBundle?: string
}

export interface CustomResourceConversion {
  strategy: 'None' | 'Webhook'
  webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions: string[] }
}

export interface CustomResourceDefinitionSpec {
  group: string
  names: CustomResourceDefinitionNames
  scope: 'Namespaced' | 'Cluster'
  versions: CustomResourceDefinitionVersion[]
  conversion?: CustomResourceConversion
  preserveUnknownFields?: boolean
}

export interface CustomResourceDefinitionCondition {
  type: 'Established' | 'NamesAccepted' | 'NonStructuralSchema' | 'Terminating' | 'KubernetesAPIApprovalPolicyConformant' | string
  status: 'True' | 'False' | 'Unknown'
  lastTransitionTime?: string
  reason?: string
  message?: string
}

export interface CustomResourceDefinitionStatus {
  conditions?: CustomResourceDefinitionCondition[]
  acceptedNames?: CustomResourceDefinitionNames
  storedVersions?: string[]
}

export interface CustomResourceDefinition extends KubeObject {
  spec: CustomResourceDefinitionSpec
  status?: CustomResourceDefinitionStatus
}

/** The version objects are stored in (exactly one has `storage: true` in a valid CRD). */
export function storageVersionOf(crd: CustomResourceDefinition): CustomResourceDefinitionVersion | undefined {
  return crd.spec.versions.find((v) => v.storage)
}

/** The condition of `type`, if set. */
export function conditionOf(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type)
}

/**
 * Sets a condition as upstream's SetCRDCondition does: the transition time
 * changes only when the status does.
 */
export function setCondition(crd: CustomResourceDefinition, condition: CustomResourceDefinitionCondition, now: string): void {
  const status = (crd.status ??= {})
  const conditions = (status.conditions ??= [])
  const i = conditions.findIndex((c) => c.type === condition.type)
  const before = i >= 0 ? conditions[i] : undefined
  // Upstream's field order: type, status, lastTransitionTime, reason, message.
  const next: CustomResourceDefinitionCondition = {
    type: condition.type,
    status: condition.status,
    lastTransitionTime: before && before.status === condition.status ? (before.lastTransitionTime ?? now) : now,
  }
  if (condition.reason !== undefined) next.reason = condition.reason
  if (condition.message !== undefined) next.message = condition.message
  if (i >= 0) conditions[i] = next
  else conditions.push(next)
}
