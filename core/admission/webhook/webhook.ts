/**
 * One webhook of a Mutating- or ValidatingWebhookConfiguration, read once
 * when the configuration changes (upstream's WebhookAccessor): its rules,
 * parsed selectors, compiled match conditions and where to call it. The
 * stored objects were defaulted and validated when written, so the reading
 * here is plain.
 */
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject } from '../../machinery/label-selector.js'
import type { KubeObject } from '../../machinery/object.js'
import { type CompiledCondition, compileMatchConditions } from './match-conditions.js'
import type { WebhookRule } from './rules.js'

export type WebhookType = 'mutating' | 'validating'

export interface WebhookClientConfig {
  url?: string
  service?: { namespace: string; name: string; path?: string; port?: number }
  caBundle?: string
}

export interface AdmissionWebhook {
  type: WebhookType
  /** Unique among the server's webhooks of its type: `<configuration>/<index>`, for reinvocation bookkeeping. */
  uid: string
  configurationName: string
  name: string
  rules: WebhookRule[]
  failurePolicy: 'Fail' | 'Ignore'
  matchPolicy: 'Exact' | 'Equivalent'
  /** Undefined when the stored selector cannot be read (refused as an internal error, as upstream's parse failure). */
  namespaceSelector: LabelSelector | { error: string }
  objectSelector: LabelSelector | { error: string }
  sideEffects: string
  timeoutSeconds: number
  admissionReviewVersions: string[]
  clientConfig: WebhookClientConfig
  reinvocationPolicy: 'Never' | 'IfNeeded'
  matchConditions: CompiledCondition[]
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [])

function selector(value: unknown): LabelSelector | { error: string } {
  try {
    // An absent selector is upstream's default: the empty one, which selects everything.
    return labelSelectorFromObject((value ?? {}) as LabelSelectorObject)
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) }
  }
}

function rules(value: unknown): WebhookRule[] {
  if (!Array.isArray(value)) return []
  return value.map((r: Record<string, unknown>) => ({
    operations: strings(r['operations']),
    apiGroups: strings(r['apiGroups']),
    apiVersions: strings(r['apiVersions']),
    resources: strings(r['resources']),
    scope: str(r['scope'], '*'),
  }))
}

/** The webhooks of one configuration, in the order it lists them. */
export function webhooksOf(configuration: KubeObject, type: WebhookType): AdmissionWebhook[] {
  const configurationName = configuration.metadata.name ?? ''
  const hooks = Array.isArray(configuration['webhooks']) ? (configuration['webhooks'] as Record<string, unknown>[]) : []
  return hooks.map((h, i) => ({
    type,
    uid: `${configurationName}/${i}`,
    configurationName,
    name: str(h['name']),
    rules: rules(h['rules']),
    failurePolicy: h['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail',
    matchPolicy: h['matchPolicy'] === 'Exact' ? 'Exact' : 'Equivalent',
    namespaceSelector: selector(h['namespaceSelector']),
    objectSelector: selector(h['objectSelector']),
    sideEffects: str(h['sideEffects']),
    timeoutSeconds: typeof h['timeoutSeconds'] === 'number' ? h['timeoutSeconds'] : 10,
    admissionReviewVersions: strings(h['admissionReviewVersions']),
    clientConfig: (h['clientConfig'] ?? {}) as WebhookClientConfig,
    reinvocationPolicy: h['reinvocationPolicy'] === 'IfNeeded' ? 'IfNeeded' : 'Never',
    matchConditions: compileMatchConditions(Array.isArray(h['matchConditions']) ? (h['matchConditions'] as { name?: string; expression?: string }[]) : []),
  }))
}
