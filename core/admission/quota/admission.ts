/**
 * ResourceQuota (upstream's plugin/pkg/admission/resourcequota): a write
 * that would take a namespace past one of its quotas' `status.hard` is
 * refused with 403, and an admitted one is charged to `status.used` of
 * every quota it matches before it is stored (each charge a conditional
 * write of the quota, retried on conflict against the fresh quota), so the
 * next request sees it. The in-process controller (resource-quota.ts in
 * core/controllers) recomputes usage when objects go.
 */
import { forbidden, internalError, StatusError } from '../../machinery/status-error.js'
import type { KubeObject } from '../../machinery/object.js'
import type { StorageError } from '../../storage/interface.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { ValidatingAdmission } from '../validating.js'
import type { LimitedResource, ResourceQuotaConfiguration } from './configuration.js'
import { evaluatorFor, type QuotaEvaluator, quotaMatches } from '../../quota/evaluators.js'
import {
  add,
  exceeding,
  hardOf,
  mask,
  negativeNames,
  prettyPrint,
  prettyPrintNames,
  removeZeros,
  type ResourceList,
  subtractNonNegative,
  usedOf,
  withUsed,
} from '../../quota/resource-list.js'
import { printScopes, type ScopeSelector, scopeSelectorsOf } from '../../quota/scopes.js'
import { appendAll } from '../../machinery/append-all.js'

/** How the plugin reads quotas (a watch-fed index) and writes a quota's status (a conditional write, retried on conflict). */
export interface QuotaAccess {
  quotas(namespace: string): KubeObject[]
  /** Replaces the stored quota with `change(current)`; the change is asked again after a conflicting write. Undefined when the quota is gone. */
  updateQuota(namespace: string, name: string, change: (current: KubeObject) => KubeObject): Promise<KubeObject | undefined>
}

/** Never charged (upstream's default ignored resources): events and the reviews that store nothing. */
const IGNORED = new Set(['/events', 'events.k8s.io/events'])
/** The only subresource writes quota looks at: a resize changes what the pod uses (its evaluator decides). */
const CHARGED_SUBRESOURCES: ReadonlySet<string> = new Set(['/pods/resize'])


/** Every name of `hard` has a used value: the controller has counted the quota (upstream's hasUsageStats). */
function hasUsageStats(quota: KubeObject, names: readonly string[]): boolean {
  const used = usedOf(quota)
  return names.every((n) => used[n] !== undefined)
}

/** The names usage consumes that a limited-resource rule matches (upstream's limitedByDefault). */
function limitedByDefault(usage: ResourceList, limited: readonly LimitedResource[]): string[] {
  const names = new Set<string>()
  for (const rule of limited)
    for (const [name, amount] of Object.entries(usage))
      if (amount.nanos > 0n && rule.matchContains.some((part) => name.includes(part))) names.add(name)
  return [...names]
}

interface Checked {
  /** The quotas the request is charged to. */
  charged: KubeObject[]
  delta: ResourceList
}

export function resourceQuotaAdmission(access: QuotaAccess, config: ResourceQuotaConfiguration, now: () => Date): ValidatingAdmission {
  const check = (a: AdmissionAttributes, evaluator: QuotaEvaluator, object: KubeObject): Checked | undefined => {
    const gr = { group: a.entry.group, resource: a.entry.resource }
    const refuse = (why: string): StatusError => forbidden(gr, a.name, why)
    const quotas = access.quotas(a.namespace)
    const limited = config.limitedResources.filter((l) => l.apiGroup === a.entry.group && l.resource === a.entry.resource)
    if (quotas.length === 0 && config.limitedResources.length === 0) return undefined

    const limitedNames = limited.length ? limitedByDefault(evaluator.usage(object, now()), limited) : []
    const limitedScopes = limited.flatMap((l) => l.matchScopes).filter((s) => evaluator.matchesScope(s, object))
    const matchedScopes: ScopeSelector[] = []
    const covered = new Set<string>()
    const interesting: KubeObject[] = []
    for (const quota of quotas) {
      const scopes = scopeSelectorsOf(quota)
      appendAll(matchedScopes, scopes.filter((s) => evaluator.matchesScope(s, object)))
      const hardNames = Object.keys(hardOf(quota))
      if (!quotaMatches(evaluator, hardNames, scopes, object)) continue
      const restricted = evaluator.matchingResources(hardNames)
      const why = evaluator.constraints(restricted, object)
      if (why) throw refuse(`failed quota: ${quota.metadata.name ?? ''}: ${why}`)
      if (!hasUsageStats(quota, restricted))
        throw refuse(`status unknown for quota: ${quota.metadata.name ?? ''}, resources: ${prettyPrintNames(restricted)}`)
      interesting.push(quota)
      for (const n of restricted) covered.add(n)
    }

    let delta = evaluator.usage(object, now())
    const negative = negativeNames(delta)
    if (negative.length) throw refuse(`quota usage is negative for resource(s): ${prettyPrintNames(negative)}`)
    // An update is charged what it adds to the stored object's usage.
    if (a.operation === 'UPDATE' && a.oldObject?.metadata.resourceVersion) delta = subtractNonNegative(delta, evaluator.usage(a.oldObject, now()))
    delta = removeZeros(delta)
    if (Object.keys(delta).length === 0) return undefined

    const uncovered = limitedNames.filter((n) => !covered.has(n))
    if (uncovered.length) throw refuse(`insufficient quota to consume: ${prettyPrintNames(uncovered)}`)
    const uncoveredScopes = limitedScopes.filter((s) => !matchedScopes.some((m) => m.scopeName === s.scopeName))
    // Upstream returns this one as a plain error, which the handler answers with 500.
    if (uncoveredScopes.length) throw new StatusError(500, 'InternalError', `insufficient quota to match these scopes: ${printScopes(uncoveredScopes)}`)
    return { charged: interesting, delta }
  }

  /** The quota with the request's usage added, or a refusal naming what it would exceed. */
  const charge = (a: AdmissionAttributes, quota: KubeObject, delta: ResourceList): KubeObject => {
    const hard = hardOf(quota)
    const used = usedOf(quota)
    const requested = mask(delta, Object.keys(hard))
    const next = add(used, requested)
    const exceeded = exceeding(mask(next, Object.keys(requested)), hard)
    if (exceeded.length)
      throw forbidden(
        { group: a.entry.group, resource: a.entry.resource },
        a.name,
        `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`,
      )
    return withUsed(quota, next)
  }

  /** Charges each quota in turn; when one refuses, what the earlier ones were charged is given back. */
  const chargeAll = async (a: AdmissionAttributes, { charged, delta }: Checked): Promise<void> => {
    const done: KubeObject[] = []
    try {
      for (const quota of charged) {
        const stored = await access.updateQuota(a.namespace, quota.metadata.name ?? '', (current) => charge(a, current, delta))
        if (stored) done.push(stored)
      }
    } catch (err) {
      for (const quota of done) {
        await access
          .updateQuota(a.namespace, quota.metadata.name ?? '', (current) => {
            const hard = Object.keys(hardOf(current))
            return withUsed(current, subtractNonNegative(usedOf(current), mask(delta, hard)))
          })
          .catch(() => undefined)
      }
      if (err instanceof StatusError) throw err
      throw internalError(`resource quota evaluation failed: ${(err as StorageError).message}`)
    }
  }

  return {
    name: 'ResourceQuota',
    handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
    async validate(a) {
      // Subresources (but a pod's resize, which changes what it uses), cluster-scoped objects and a namespace's own creation are not charged.
      if ((a.subresource && !CHARGED_SUBRESOURCES.has(`${a.entry.group}/${a.entry.resource}/${a.subresource}`)) || !a.namespace || !a.entry.namespaced || a.entry.virtualCreate) return
      if (IGNORED.has(`${a.entry.group}/${a.entry.resource}`)) return
      const evaluator = evaluatorFor(a.entry.group, a.entry.resource)
      if (!evaluator.handles(a.operation, a.subresource)) return
      // Nothing to charge: the object is not read, so the validating phase's copy of it is not made.
      if (access.quotas(a.namespace).length === 0 && config.limitedResources.length === 0) return
      if (!a.object) return
      const object: KubeObject = { ...a.object, metadata: { ...a.object.metadata, namespace: a.object.metadata.namespace ?? a.namespace } }
      const checked = check(a, evaluator, object)
      if (!checked) return
      if (a.dryRun) {
        // A dry run is checked against the quotas as they are, and charges nothing.
        for (const quota of checked.charged) charge(a, quota, checked.delta)
        return
      }
      await chargeAll(a, checked)
    },
  }
}
