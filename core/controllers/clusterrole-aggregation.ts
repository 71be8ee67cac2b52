/**
 * What kube-controller-manager's clusterrole-aggregation controller does,
 * run in-process: a ClusterRole with `aggregationRule.clusterRoleSelectors`
 * holds the rules of every other ClusterRole its selectors pick, kept
 * current as cluster roles are created, changed and deleted. That is how
 * `admin`, `edit` and `view` fill themselves from the `system:aggregate-to-*`
 * roles, and how a CRD author's role labelled
 * `rbac.authorization.k8s.io/aggregate-to-edit: "true"` joins them.
 *
 * Cluster roles are read from the shared informer; every change makes each
 * aggregated role be looked at again, and one whose gathered rules differ
 * from its own is written by a server-side apply of its rules under the
 * controller's field manager, as upstream's controller writes it.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { labelSelectorFromObject } from '../machinery/label-selector.js'
import type { InformerFactory } from '../client/informer-factory.js'
import type { ObjectClient } from '../client/object-client.js'
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'
import { clusterRoles } from '../resources/groups/rbac.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { LabelSelectorData, PolicyRule } from '../resources/rbac/bootstrap-policy-types.js'
import { policyRules } from '../resources/rbac/reconcile.js'
import { semanticEqual, semanticKey } from '../resources/rbac/semantic-equal.js'
import { WorkQueue, type WorkResult } from './garbage-collector-queue.js'

/** The field manager of the controller's applies, upstream's. */
export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller'

/**
 * It writes as the administrator: it runs from the first moment, before the
 * bootstrap policy has granted upstream's controller account its role, and
 * a refusal then would only delay the aggregated roles.
 */
const AGGREGATION_IDENTITY = ADMIN_IDENTITY

export interface ClusterRoleAggregation {
  stop(): void
  /**
   * Resolves once the roles of the first list have been looked at and each
   * aggregated role written where its rules differed (a write that failed
   * is retried later, unwaited).
   */
  firstPass(): Promise<void>
}

function selectorsOf(role: KubeObject): LabelSelectorData[] | undefined {
  const rule = role['aggregationRule']
  if (!isPlainObject(rule)) return undefined
  return Array.isArray(rule['clusterRoleSelectors']) ? (rule['clusterRoleSelectors'] as LabelSelectorData[]) : []
}

/**
 * The rules an aggregated role should hold, as upstream gathers them: per
 * selector in order, the matching roles by name (the role itself left out),
 * each rule once, in the order first met.
 */
export function aggregatedRules(role: KubeObject, all: Iterable<KubeObject>): PolicyRule[] {
  const roles = [...all].sort((a, b) => compareNames(a.metadata.name ?? '', b.metadata.name ?? ''))
  const rules: PolicyRule[] = []
  // Each rule once, told apart by its semantic key: compared with every rule before it, 3,000 rules held the
  // thread 34 s on each change of any ClusterRole.
  const seen = new Set<string>()
  for (const selectorData of selectorsOf(role) ?? []) {
    const selector = labelSelectorFromObject(selectorData)
    for (const other of roles) {
      if (other.metadata.name === role.metadata.name || !selector.matches(other.metadata.labels)) continue
      for (const rule of policyRules(other)) {
        const key = semanticKey(rule)
        if (seen.has(key)) continue
        seen.add(key)
        rules.push(rule)
      }
    }
  }
  return rules
}

/**
 * The aggregated roles in the order their rules flow: a role another one's
 * selectors pick comes first (view before edit, edit before admin), so that
 * a first pass finds each one's sources filled and writes it once rather
 * than again as they fill. Otherwise, and within a cycle, name order.
 */
function aggregationOrder(roles: Iterable<KubeObject>): KubeObject[] {
  const aggregated = [...roles].filter((r) => selectorsOf(r) !== undefined).sort((a, b) => compareNames(a.metadata.name ?? '', b.metadata.name ?? ''))
  const selectors = new Map(aggregated.map((r) => [r, (selectorsOf(r) ?? []).map(labelSelectorFromObject)]))
  const picks = (consumer: KubeObject, source: KubeObject): boolean =>
    consumer !== source && selectors.get(consumer)!.some((selector) => selector.matches(source.metadata.labels))
  const ordered: KubeObject[] = []
  const left = new Set(aggregated)
  while (left.size > 0) {
    const ready = [...left].find((role) => ![...left].some((source) => picks(role, source)))
    const next = ready ?? left.values().next().value!
    ordered.push(next)
    left.delete(next)
  }
  return ordered
}

/** Go's string order (bytes), which upstream's sort by name uses. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** What the controller reads and writes through. */
export interface ClusterRoleAggregationContext {
  readonly client: ObjectClient
  readonly informers: InformerFactory
  readonly catalogue: Catalogue
  readonly logger: Logger
}

export function startClusterRoleAggregation({ client, informers, catalogue, logger }: ClusterRoleAggregationContext): ClusterRoleAggregation {
  const entry = catalogue.lookup(clusterRoles.group, clusterRoles.version, clusterRoles.resource)
  // The RBAC API switched off: nothing to aggregate.
  if (!entry) return { stop: () => {}, firstPass: () => Promise.resolve() }
  const roles = informers.informer(entry)
  const controller = client.as(AGGREGATION_IDENTITY, `kube-controller-manager/${AGGREGATION_FIELD_MANAGER}`)
  const queue = new WorkQueue<string>((name) => sync(name), {
    workers: 1,
    onError: (name, err) => logger.warn({ clusterrole: name, err: String(err) }, 'aggregating the rules of a cluster role failed; it will be retried'),
  })

  /** Every change may change what any selector picks: each aggregated role is looked at again (upstream enqueues them all), sources first. */
  const enqueueAggregated = (): void => {
    for (const role of aggregationOrder(roles.list())) queue.add(role.metadata.name ?? '', role.metadata.name ?? '')
  }

  const sync = async (name: string): Promise<WorkResult> => {
    const role = roles.get('', name)
    if (!role || selectorsOf(role) === undefined) return 'done'
    const rules = aggregatedRules(role, roles.list())
    if (semanticEqual(rules, policyRules(role))) return 'done'
    await applyRules(controller, entry, name, rules)
    return 'done'
  }

  // Followed from the end of the informer's first list: a change it reports while it lists would be looked at
  // against the roles listed so far (admin before the roles it gathers).
  let stopped = false
  let unsubscribe = (): void => {}
  const firstList = roles.synced.then(() => {
    if (stopped) return
    unsubscribe = roles.onChange(enqueueAggregated)
    enqueueAggregated()
  })
  queue.start()
  return {
    stop() {
      stopped = true
      unsubscribe()
      queue.stop()
    },
    async firstPass() {
      await firstList
      await queue.whenDrained()
    },
  }
}

/** A server-side apply of the rules alone, forced: the aggregated rules are the controller's to set. */
async function applyRules(client: ObjectClient, entry: ResourceEntry, name: string, rules: PolicyRule[]): Promise<void> {
  const config: Record<string, unknown> = { apiVersion: `${entry.group}/${entry.version}`, kind: entry.kind, metadata: { name } }
  // No rules at all: the applied configuration leaves the field out, and the apply takes the controller's rules away.
  if (rules.length > 0) config['rules'] = rules
  try {
    await client.get(entry, '', name)
  } catch (err) {
    // Deleted meanwhile: an apply would bring it back.
    if (hasStatusCode(err, 404)) return
    throw err
  }
  await client.patch(entry, '', name, 'apply', config, { fieldManager: AGGREGATION_FIELD_MANAGER, force: true })
}
