/**
 * Upstream's reconciliation of a stored role or binding with the one the
 * default policy expects (pkg/registry/rbac/reconciliation, the union mode
 * the `rbac/bootstrap-roles` hook and `kubectl auth reconcile` use):
 * missing labels, annotations, rules, aggregation selectors and subjects
 * are added, nothing is ever taken away, and an object annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { LabelSelectorData, PolicyRule, Subject } from './bootstrap-policy-types.js'
import { uncoveredRules } from './policy-comparator.js'
import { semanticEqual } from './semantic-equal.js'
import { appendAll } from '../../machinery/append-all.js'

export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate'

/** none: as expected; create: missing; update: add what is missing; recreate: the binding grants another role. */
export type ReconcileOperation = 'none' | 'create' | 'update' | 'recreate'

export interface ReconcileResult {
  operation: ReconcileOperation
  /** The stored object opted out of reconciliation; it is not written whatever the operation. */
  protected: boolean
  /** The object to write for the operation (the stored one, changed). */
  object: KubeObject
  /** What was added: rule pieces, aggregation selectors or subjects, for the log. */
  added: unknown[]
}

export function isReconcileProtected(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false'
}

export function policyRules(obj: KubeObject): PolicyRule[] {
  return Array.isArray(obj['rules']) ? (obj['rules'] as PolicyRule[]) : []
}

function selectors(obj: KubeObject): LabelSelectorData[] | undefined {
  const rule = obj['aggregationRule']
  if (!isPlainObject(rule)) return undefined
  return Array.isArray(rule['clusterRoleSelectors']) ? (rule['clusterRoleSelectors'] as LabelSelectorData[]) : []
}

/** Later maps win, as upstream's merge: the stored values stay, missing keys come from the policy. */
function merged(expected: Record<string, string> | undefined, stored: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!expected && !stored) return undefined
  return { ...expected, ...stored }
}

/** Labels and annotations first; true when they changed. */
function mergeMetadata(result: KubeObject, expected: KubeObject): boolean {
  const meta = result.metadata
  const annotations = merged(expected.metadata.annotations, meta.annotations)
  const labels = merged(expected.metadata.labels, meta.labels)
  const changed = !semanticEqual(annotations, meta.annotations) || !semanticEqual(labels, meta.labels)
  if (annotations) meta.annotations = annotations
  if (labels) meta.labels = labels
  return changed
}

/** A Role or ClusterRole: upstream's computeReconciledRole with removeExtraPermissions off. */
export function reconcileRole(stored: KubeObject | undefined, expected: KubeObject): ReconcileResult {
  if (!stored) return { operation: 'create', protected: false, object: structuredClone(expected), added: policyRules(expected) }
  const result = structuredClone(stored)
  let update = mergeMetadata(result, expected)
  const added: unknown[] = []

  const missingRules = uncoveredRules(policyRules(stored), policyRules(expected))
  if (missingRules.length > 0) {
    result['rules'] = [...policyRules(stored), ...missingRules]
    appendAll(added, missingRules)
    update = true
  }

  const want = selectors(expected)
  const have = selectors(stored)
  if (want === undefined && have !== undefined) {
    // Upstream drops an aggregation the policy does not have.
    delete result['aggregationRule']
    update = true
  } else if (want !== undefined) {
    const missing = want.filter((s) => !(have ?? []).some((h) => semanticEqual(h, s)))
    if (missing.length > 0) {
      result['aggregationRule'] = { clusterRoleSelectors: [...(have ?? []), ...missing] }
      appendAll(added, missing)
      update = true
    }
  }
  return { operation: update ? 'update' : 'none', protected: isReconcileProtected(stored), object: result, added }
}

function subjects(obj: KubeObject): Subject[] {
  return Array.isArray(obj['subjects']) ? (obj['subjects'] as Subject[]) : []
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.kind === b.kind && a.name === b.name && (a.apiGroup ?? '') === (b.apiGroup ?? '') && (a.namespace ?? '') === (b.namespace ?? '')
}

function sameRoleRef(a: unknown, b: unknown): boolean {
  const x = isPlainObject(a) ? a : {}
  const y = isPlainObject(b) ? b : {}
  return ['apiGroup', 'kind', 'name'].every((f) => (x[f] ?? '') === (y[f] ?? ''))
}

/** A RoleBinding or ClusterRoleBinding: upstream's computeReconciledRoleBinding with removeExtraSubjects off. */
export function reconcileBinding(stored: KubeObject | undefined, expected: KubeObject): ReconcileResult {
  if (!stored) return { operation: 'create', protected: false, object: structuredClone(expected), added: subjects(expected) }
  const isProtected = isReconcileProtected(stored)
  // The role a binding grants cannot change: a binding to another role is replaced whole.
  if (!sameRoleRef(stored['roleRef'], expected['roleRef']))
    return { operation: 'recreate', protected: isProtected, object: structuredClone(expected), added: subjects(expected) }
  const result = structuredClone(stored)
  let update = mergeMetadata(result, expected)
  const missing = subjects(expected).filter((s) => !subjects(stored).some((have) => sameSubject(have, s)))
  if (missing.length > 0) {
    result['subjects'] = [...subjects(stored), ...missing]
    update = true
  }
  return { operation: update ? 'update' : 'none', protected: isProtected, object: result, added: missing }
}
