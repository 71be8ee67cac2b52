/**
 * The built-in catalogue: every resource a current upstream API server
 * serves by default, group by group in upstream's discovery order (core
 * first; within a group the preferred version first).
 */
import type { AccessDecider } from '../authz/access-review.js'
import type { ResourceEntry } from './catalogue.js'
import { configMaps } from './core/configmaps.js'
import { bindings, componentStatuses } from './core/cluster-info.js'
import { events } from './core/events.js'
import { namespaces } from './core/namespaces.js'
import { nodes } from './core/nodes.js'
import { pods } from './core/pods.js'
import { limitRanges, resourceQuotas } from './core/quotas.js'
import { podTemplates, replicationControllers } from './core/replication.js'
import { secrets } from './core/secrets.js'
import { serviceAccounts } from './core/serviceaccounts.js'
import { endpoints, services } from './core/services.js'
import { persistentVolumeClaims, persistentVolumes } from './core/volumes.js'
import { admissionRegistrationEntries } from './groups/admissionregistration.js'
import { customResourceDefinitions } from './groups/apiextensions.js'
import { apiServices } from './groups/apiregistration.js'
import { appsEntries } from './groups/apps.js'
import { autoscalingEntries } from './groups/autoscaling.js'
import { batchEntries } from './groups/batch.js'
import { certificateSigningRequests } from './groups/certificates.js'
import { leaseCandidates, leases } from './groups/coordination.js'
import { endpointSlices } from './groups/discovery.js'
import { eventsV1 } from './groups/events.js'
import { flowControlEntries } from './groups/flowcontrol.js'
import { networkingEntries } from './groups/networking.js'
import { runtimeClasses } from './groups/node.js'
import { policyEntries } from './groups/policy.js'
import { rbacEntries } from './groups/rbac.js'
import { resourceEntries } from './groups/resource.js'
import { priorityClasses } from './groups/scheduling.js'
import { storageEntries } from './groups/storage.js'
import {
  type RulesResolver,
  localSubjectAccessReviews,
  selfSubjectAccessReviews,
  selfSubjectReviews,
  selfSubjectRulesReviews,
  subjectAccessReviews,
  type TokenAuthenticate,
  tokenReviews,
} from './reviews.js'

export const coreEntries: readonly ResourceEntry[] = [
  bindings,
  componentStatuses,
  configMaps,
  endpoints,
  events,
  limitRanges,
  namespaces,
  nodes,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  podTemplates,
  replicationControllers,
  resourceQuotas,
  secrets,
  serviceAccounts,
  services,
]

export interface BuiltinOptions {
  /** The token authenticators, for TokenReview; without them every token is unknown. */
  authenticateToken?: TokenAuthenticate
  /** What the authorizers can list of a user's permissions, for SelfSubjectRulesReview; without it the answer is incomplete. */
  rulesFor?: RulesResolver
}

export function builtinEntries(decide: AccessDecider, options: BuiltinOptions = {}): ResourceEntry[] {
  return [
    ...coreEntries,
    apiServices,
    ...appsEntries,
    eventsV1,
    selfSubjectReviews,
    tokenReviews(options.authenticateToken),
    localSubjectAccessReviews(decide),
    selfSubjectAccessReviews(decide),
    selfSubjectRulesReviews(options.rulesFor),
    subjectAccessReviews(decide),
    ...autoscalingEntries,
    ...batchEntries,
    certificateSigningRequests,
    ...networkingEntries,
    ...policyEntries,
    ...rbacEntries,
    ...storageEntries,
    ...admissionRegistrationEntries,
    customResourceDefinitions,
    priorityClasses,
    leases,
    leaseCandidates,
    runtimeClasses,
    endpointSlices,
    ...flowControlEntries,
    ...resourceEntries,
  ]
}

let storagePaths: Map<string, string> | undefined

/**
 * Where a built-in resource's objects live under the storage prefix, as
 * upstream lays them out (nodes under `minions`, services under
 * `services/specs`, ingresses under `ingress`); the resource name for the
 * rest. Per-resource storage settings (`--kvstore-servers-overrides`) key on it.
 */
export function builtinStoragePath(group: string, resource: string): string {
  storagePaths ??= new Map(
    builtinEntries(async () => ({ allowed: false })).map((e) => [`${e.group}/${e.resource}`, e.storagePath ?? e.resource]),
  )
  return storagePaths.get(`${group}/${resource}`) ?? resource
}
