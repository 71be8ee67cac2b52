/**
 * An APIService as the aggregator reads it: where its group/version is
 * served (locally, or by a Service) and whether it is available.
 */
import { isPlainObject, type KubeObject } from '../machinery/object.js'

export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io'

/** The label of the APIServices the server keeps for its own group/versions (upstream's autoregister). */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged'

export interface ServiceReference {
  namespace: string
  name: string
  port: number
}

export interface ApiService {
  name: string
  group: string
  version: string
  /** Absent for a local APIService: the group/version is this server's own. */
  service?: ServiceReference
  /** Base64 of the PEM bundle that verifies the extension server. */
  caBundle?: string
  insecureSkipTLSVerify: boolean
  groupPriorityMinimum: number
  versionPriority: number
  /** The Available condition is True. */
  available: boolean
  object: KubeObject
}

/** `<version>.<group>`, the name upstream requires (`v1.` for the core group). */
export const apiServiceName = (group: string, version: string): string => `${version}.${group}`

const text = (v: unknown): string => (typeof v === 'string' ? v : '')
const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback)

export function readApiService(obj: KubeObject): ApiService {
  const spec = isPlainObject(obj['spec']) ? obj['spec'] : {}
  const status = isPlainObject(obj['status']) ? obj['status'] : {}
  const conditions = Array.isArray(status['conditions']) ? status['conditions'] : []
  const available = conditions.some((c) => isPlainObject(c) && c['type'] === 'Available' && c['status'] === 'True')
  const svc = isPlainObject(spec['service']) ? spec['service'] : undefined
  const caBundle = text(spec['caBundle'])
  return {
    name: obj.metadata.name ?? '',
    group: text(spec['group']),
    version: text(spec['version']),
    ...(svc ? { service: { namespace: text(svc['namespace']), name: text(svc['name']), port: num(svc['port'], 443) } } : {}),
    ...(caBundle ? { caBundle } : {}),
    insecureSkipTLSVerify: spec['insecureSkipTLSVerify'] === true,
    groupPriorityMinimum: num(spec['groupPriorityMinimum'], 0),
    versionPriority: num(spec['versionPriority'], 0),
    available,
    object: obj,
  }
}

export interface AvailableCondition {
  status: 'True' | 'False' | 'Unknown'
  reason: string
  message: string
}

/**
 * The object with its Available condition set; the transition time moves
 * only when the status does, as upstream's SetAPIServiceCondition does.
 * Undefined when nothing would change.
 */
export function withAvailableCondition(obj: KubeObject, condition: AvailableCondition, now: Date): KubeObject | undefined {
  const status = isPlainObject(obj['status']) ? obj['status'] : {}
  const conditions = (Array.isArray(status['conditions']) ? status['conditions'] : []).filter(isPlainObject)
  const current = conditions.find((c) => c['type'] === 'Available')
  if (current && current['status'] === condition.status && current['reason'] === condition.reason && current['message'] === condition.message) {
    return undefined
  }
  const lastTransitionTime =
    current && current['status'] === condition.status && typeof current['lastTransitionTime'] === 'string'
      ? current['lastTransitionTime']
      : now.toISOString().replace(/\.\d{3}Z$/, 'Z')
  const next = { type: 'Available', ...condition, lastTransitionTime }
  const others = conditions.filter((c) => c['type'] !== 'Available')
  return { ...obj, status: { ...status, conditions: [...others, next] } }
}
