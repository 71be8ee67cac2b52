/**
 * What kube-controller-manager's clusterrole-aggregation controller does,
 * run in-process: a ClusterRole with `aggregationRule.clusterRoleSelectors`
 * holds the rules of every other ClusterRole its selectors pick, kept
 * current as cluster roles are created, changed and deleted. That is how
 * `admin`, `edit` and `view` fill themselves from the `system:aggregate-to-*`
 * roles, and how a CRD author's role labelled
 * `rbac.authorization.k8s.io/aggregate-to-edit: "true"` joins them.
 *
 * Cluster roles are listed and watched into memory; every change makes each
 * aggregated role be looked at again, and one whose gathered rules differ
 * from its own is written by a server-side apply of its rules under the
 * controller's field manager, as upstream's controller writes it.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { ADMIN_IDENTITY } from '../options/api-server-options.js'
import type { Logger } from '../logging/logger.js'
import { labelSelectorFromObject } from '../machinery/label-selector.js'
import type { Registry } from '../registry/registry.js'
import type { ResourceStore } from '../registry/store.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import type { LabelSelectorData, PolicyRule } from '../resources/rbac/bootstrap-policy-types.js'
import { policyRules } from '../resources/rbac/reconcile.js'
import { semanticEqual } from '../resources/rbac/semantic-equal.js'
import { WorkQueue, type WorkResult } from './garbage-collector-queue.js'
import { rbacStores } from './rbac-bootstrap-roles.js'

/** The field manager of the controller's applies, upstream's. */
export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller'

export interface ClusterRoleAggregation {
  stop(): void
  /** Resolves once every change seen so far has been aggregated. */
  settled(): Promise<void>
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
  for (const selectorData of selectorsOf(role) ?? []) {
    const selector = labelSelectorFromObject(selectorData)
    for (const other of roles) {
      if (other.metadata.name === role.metadata.name || !selector.matches(other.metadata.labels)) continue
      for (const rule of policyRules(other)) if (!rules.some((r) => semanticEqual(r, rule))) rules.push(rule)
    }
  }
  return rules
}

/** Go's string order (bytes), which upstream's sort by name uses. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export function startClusterRoleAggregation(registry: Registry, now: () => Date, logger: Logger): ClusterRoleAggregation {
  const store = rbacStores(registry)?.clusterRoles
  if (!store) return { stop: () => {}, settled: () => Promise.resolve() }
  const controller = new AbortController()
  const cache = new Map<string, KubeObject>()
  const queue = new WorkQueue<string>((name) => sync(name), {
    workers: 1,
    onError: (name, err) => logger.warn({ clusterrole: name, err: String(err) }, 'aggregating the rules of a cluster role failed; it will be retried'),
  })

  /** Every change may change what any selector picks: each aggregated role is looked at again (upstream enqueues them all). */
  const enqueueAggregated = (): void => {
    for (const [name, role] of cache) if (selectorsOf(role) !== undefined) queue.add(name, name)
  }

  const sync = async (name: string): Promise<WorkResult> => {
    const role = cache.get(name)
    if (!role || selectorsOf(role) === undefined) return 'done'
    const rules = aggregatedRules(role, cache.values())
    if (semanticEqual(rules, policyRules(role))) return 'done'
    await applyRules(store, name, rules, now)
    return 'done'
  }

  let listed!: () => void
  const firstList = new Promise<void>((resolve) => (listed = resolve))
  void follow(store, registry, cache, controller.signal, logger, () => {
    listed()
    enqueueAggregated()
  })
  queue.start()
  return {
    stop() {
      controller.abort()
      queue.stop()
    },
    async settled() {
      await firstList
      await queue.whenIdle()
    },
  }
}

/** A server-side apply of the rules alone, forced: the aggregated rules are the controller's to set. */
async function applyRules(store: ResourceStore, name: string, rules: PolicyRule[], now: () => Date): Promise<void> {
  const config: Record<string, unknown> = {
    apiVersion: `${store.entry.group}/${store.entry.version}`,
    kind: store.entry.kind,
    metadata: { name },
  }
  // No rules at all: the applied configuration leaves the field out, and the apply takes the controller's rules away.
  if (rules.length > 0) config['rules'] = rules
  try {
    await store.get('', name)
  } catch (err) {
    // Deleted meanwhile: an apply would bring it back.
    if (hasStatusCode(err, 404)) return
    throw err
  }
  await store.apply('', name, config, {
    user: ADMIN_IDENTITY,
    now: now(),
    dryRun: false,
    fieldManager: AGGREGATION_FIELD_MANAGER,
    apply: { force: true },
  })
}

/**
 * Lists the cluster roles into the cache, then follows their watch; lists
 * again when the watch ends or fails. `onSynced` is called after every list.
 */
async function follow(
  store: ResourceStore,
  registry: Registry,
  cache: Map<string, KubeObject>,
  signal: AbortSignal,
  logger: Logger,
  onSynced: () => void,
): Promise<void> {
  const prefix = store.prefix('')
  let delay = 100
  while (!signal.aborted) {
    try {
      const list = await store.storage.list(prefix)
      if (signal.aborted) return
      cache.clear()
      for (const role of list.items) if (role.metadata.name) cache.set(role.metadata.name, role)
      onSynced()
      const watcher = store.storage.watch(prefix, { resourceVersion: String(list.revision), signal })
      for await (const event of watcher) {
        if (event.type === 'BOOKMARK') continue
        const name = event.object.metadata.name
        if (!name) continue
        if (event.type === 'DELETED') cache.delete(name)
        else cache.set(name, event.object)
        onSynced()
        delay = 100
      }
    } catch (err) {
      if (signal.aborted) return
      logger.warn({ prefix, err: String(err) }, 'cluster role aggregation watch failed; listing again')
    }
    if (signal.aborted) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay)
      // A pause before listing again does not keep a process alive on its own.
      ;(timer as { unref?: () => void }).unref?.()
    })
    delay = Math.min(delay * 2, 30_000)
  }
}
