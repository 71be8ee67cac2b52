/**
 * PodSecurity (upstream's pod-security-admission as the built-in plugin):
 * a pod is held to its namespace's `enforce` level (403 `violates
 * PodSecurity "<level>:<version>": ...`), its `warn` level answers with
 * Warning headers and its `audit` level with audit annotations; a
 * workload's pod template gets the warnings and annotations only; a
 * namespace's labels must be valid, and tightening its enforce level warns
 * about the pods already there. Exempt users, runtime classes and
 * namespaces pass untouched.
 */
import { forbidden } from '../../machinery/status-error.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { invalidError } from '../../machinery/field.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { ValidatingAdmission } from '../validating.js'
import type { PodParts } from './check-helpers.js'
import type { PodSecurityConfiguration } from './configuration.js'
import { evaluatePod, LABEL_PREFIX, type LevelVersion, policyFromLabels, policyText } from './policy.js'
import { appendAll } from '../../machinery/append-all.js'

export interface PodSecurityAccess {
  /** The namespace, from a watch-fed index (a read of storage when the index has not seen it yet). */
  namespace(name: string): Promise<KubeObject | undefined>
  /** The pods of a namespace, to warn about when its enforce level tightens. */
  pods(namespace: string): Promise<KubeObject[]>
}

/** Upstream's cap on the pods a label change evaluates. */
const MAX_PODS_TO_CHECK = 3000
/** Pod subresources that change nothing the standards look at. */
const CHECKED_POD_SUBRESOURCES = new Set(['', 'ephemeralcontainers'])

/** Where each workload kind keeps its pod template. */
const TEMPLATE_PATHS: Record<string, string[]> = {
  '/podtemplates': ['template'],
  '/replicationcontrollers': ['spec', 'template'],
  'apps/deployments': ['spec', 'template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
}

function dig(object: unknown, path: readonly string[]): unknown {
  let at = object
  for (const key of path) at = isPlainObject(at) ? at[key] : undefined
  return at
}

function partsOf(template: unknown): PodParts | undefined {
  if (!isPlainObject(template) || !isPlainObject(template['spec'])) return undefined
  const metadata = isPlainObject(template['metadata']) ? template['metadata'] : {}
  const annotations = isPlainObject(metadata['annotations']) ? (metadata['annotations'] as Record<string, string>) : undefined
  return { metadata: annotations ? { annotations } : {}, spec: template['spec'] }
}

/** Only a change the standards could judge differently is checked again (upstream's isSignificantPodUpdate: images may change). */
function significantUpdate(pod: PodParts, old: PodParts | undefined): boolean {
  if (!old) return true
  const withoutImages = (p: PodParts): string =>
    JSON.stringify({
      ...p.spec,
      containers: (Array.isArray(p.spec['containers']) ? p.spec['containers'] : []).map((c: unknown) => ({ ...(c as object), image: undefined })),
      initContainers: (Array.isArray(p.spec['initContainers']) ? p.spec['initContainers'] : []).map((c: unknown) => ({ ...(c as object), image: undefined })),
    })
  const apparmor = (p: PodParts): string =>
    JSON.stringify(Object.entries(p.metadata.annotations ?? {}).filter(([k]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/')).sort())
  return withoutImages(pod) !== withoutImages(old) || apparmor(pod) !== apparmor(old)
}

function annotate(a: AdmissionAttributes, key: string, value: string): void {
  if (a.auditAnnotations) a.auditAnnotations[`${LABEL_PREFIX}${key}`] = value
}

export function podSecurityAdmission(config: PodSecurityConfiguration, access: PodSecurityAccess): ValidatingAdmission {
  const exemption = (a: AdmissionAttributes, runtimeClass: unknown): string | undefined => {
    if (config.exemptions.namespaces.has(a.namespace)) return 'namespace'
    if (config.exemptions.usernames.has(a.user.username)) return 'user'
    if (typeof runtimeClass === 'string' && config.exemptions.runtimeClasses.has(runtimeClass)) return 'runtimeClass'
    return undefined
  }

  /** A pod or a template judged by the namespace's policy; `enforce` false for templates. */
  const evaluate = async (a: AdmissionAttributes, pod: PodParts, enforce: boolean): Promise<void> => {
    const exempt = exemption(a, pod.spec['runtimeClassName'])
    if (exempt) return annotate(a, 'exempt', exempt)
    const namespace = await access.namespace(a.namespace)
    const { policy } = policyFromLabels(namespace?.metadata.labels, config.defaults)
    if (enforce && policy.enforce.level !== 'privileged') {
      annotate(a, 'enforce-policy', policyText(policy.enforce))
      const result = evaluatePod(policy.enforce, pod)
      if (!result.allowed)
        throw forbidden({ group: a.entry.group, resource: a.entry.resource }, a.name, `violates PodSecurity ${JSON.stringify(policyText(policy.enforce))}: ${result.detail}`)
    }
    if (policy.audit.level !== 'privileged') {
      const result = evaluatePod(policy.audit, pod)
      if (!result.allowed) annotate(a, 'audit-violations', `would violate PodSecurity ${JSON.stringify(policyText(policy.audit))}: ${result.detail}`)
    }
    // A refused request got no further; one that passed enforce at the same level and version has nothing to warn about.
    const sameAsEnforce = enforce && policyText(policy.warn) === policyText(policy.enforce)
    if (policy.warn.level !== 'privileged' && !sameAsEnforce) {
      const result = evaluatePod(policy.warn, pod)
      if (!result.allowed) a.warnings.push(`would violate PodSecurity ${JSON.stringify(policyText(policy.warn))}: ${result.detail}`)
    }
  }

  const validateNamespace = async (a: AdmissionAttributes): Promise<void> => {
    if (!a.object) return
    const { policy, errors } = policyFromLabels(a.object.metadata.labels, config.defaults)
    if (errors.length) throw invalidError('', 'namespaces', a.name, errors)
    if (a.operation !== 'UPDATE' || !a.oldObject) return
    const old = policyFromLabels(a.oldObject.metadata.labels, config.defaults).policy
    const next = policy.enforce
    // Nothing to warn about when the enforce level is unchanged, off, or relaxed at the same version.
    if (policyText(next) === policyText(old.enforce) || next.level === 'privileged') return
    const rank = (l: string): number => ['privileged', 'baseline', 'restricted'].indexOf(l)
    if (next.version === old.enforce.version && rank(next.level) <= rank(old.enforce.level)) return
    if (config.exemptions.namespaces.has(a.name)) {
      a.warnings.push(`namespace ${JSON.stringify(a.name)} is exempt from Pod Security, and the policy (${policyText(next)}) will be ignored`)
      return
    }
    appendAll(a.warnings, (await existingPodWarnings(a.name, next)))
  }

  const existingPodWarnings = async (namespace: string, enforce: LevelVersion): Promise<string[]> => {
    let pods: KubeObject[]
    try {
      pods = await access.pods(namespace)
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level']
    }
    const byReasons = new Map<string, { first: string; count: number }>()
    for (const pod of pods.slice(0, MAX_PODS_TO_CHECK)) {
      const parts = partsOf(pod)
      if (!parts || (typeof parts.spec['runtimeClassName'] === 'string' && config.exemptions.runtimeClasses.has(parts.spec['runtimeClassName']))) continue
      const result = evaluatePod(enforce, parts)
      if (result.allowed) continue
      const key = result.reasons.join(', ')
      const seen = byReasons.get(key)
      if (seen) seen.count++
      else byReasons.set(key, { first: pod.metadata.name ?? '', count: 1 })
    }
    if (!byReasons.size) return []
    const lines = [...byReasons].map(([reasons, { first, count }]) => {
      const others = count === 2 ? ' (and 1 other pod)' : count > 2 ? ` (and ${count - 1} other pods)` : ''
      return `${first}${others}: ${reasons}`
    })
    const head = `existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(policyText(enforce))}`
    const incomplete = pods.length > MAX_PODS_TO_CHECK ? [`new PodSecurity enforce level only checked against the first ${MAX_PODS_TO_CHECK} of ${pods.length} pods`] : []
    return [head, ...incomplete, ...lines.sort()]
  }

  return {
    name: 'PodSecurity',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    async validate(a) {
      const key = `${a.entry.group}/${a.entry.resource}`
      // A resource with no pods in it is left before its object is read (and copied for validation).
      if (key !== '/namespaces' && key !== '/pods' && !TEMPLATE_PATHS[key]) return
      if (!a.object) return
      if (key === '/namespaces') return a.subresource ? undefined : validateNamespace(a)
      if (key === '/pods') {
        if (!CHECKED_POD_SUBRESOURCES.has(a.subresource ?? '')) return
        const pod = partsOf(a.object)
        if (!pod) return
        if (a.operation === 'UPDATE' && !a.subresource && !significantUpdate(pod, partsOf(a.oldObject))) return
        return evaluate(a, pod, true)
      }
      const templatePath = TEMPLATE_PATHS[key]
      if (!templatePath || a.subresource) return
      const template = partsOf(dig(a.object, templatePath))
      if (!template) return
      if (a.operation === 'UPDATE' && !significantUpdate(template, partsOf(dig(a.oldObject, templatePath)))) return
      return evaluate(a, template, false)
    },
  }
}
